/**
 * The notes ledger's tables, the second step of the stores' schema: per (user, session) the
 * record of the facts (the seed's `UserVessel.notableFacts`), per user the profile record (the
 * seed's `User.globalFacts`), each a JSONB value with a version; and the leases that let
 * trackers in several processes take turns on one (user, session), with the queue of what
 * waits for the holder (user messages to extract, ends of stage to merge).
 */
/** The lease call (`notes_lease`): one statement, so taking a turn and adding to the queue happen at one moment. */
const leaseFunction = (s: string): string => `CREATE FUNCTION ${s}.notes_lease(
  p_user text, p_session text, p_holder text, p_ttl_ms double precision, p_done bigint,
  p_kinds text[], p_texts text[], p_ats double precision[]
) RETURNS TABLE (held boolean, expires_in_ms double precision, added bigint[], head bigint, queue jsonb)
LANGUAGE plpgsql AS $lease$
DECLARE
  v_holder text;
  v_expires timestamptz;
  v_added bigint[];
  v_head bigint;
BEGIN
  -- The lease row is the slot's lock: made when missing, locked, and gone again once nothing waits.
  LOOP
    INSERT INTO ${s}.notes_leases AS l (user_id, session_id, holder, expires_at)
      VALUES (p_user, p_session, '', '-infinity') ON CONFLICT DO NOTHING;
    SELECT l.holder, l.expires_at INTO v_holder, v_expires FROM ${s}.notes_leases l
      WHERE l.user_id = p_user AND l.session_id = p_session FOR UPDATE;
    EXIT WHEN FOUND;
  END LOOP;
  IF p_done IS NOT NULL THEN
    DELETE FROM ${s}.notes_queue q WHERE q.user_id = p_user AND q.session_id = p_session AND q.seq <= p_done;
  END IF;
  WITH inserted AS (
    INSERT INTO ${s}.notes_queue (user_id, session_id, kind, text, at, origin)
    SELECT p_user, p_session, u.kind, u.text, u.at, p_holder
      FROM unnest(p_kinds, p_texts, p_ats) WITH ORDINALITY AS u(kind, text, at, n) ORDER BY u.n
    RETURNING seq
  ) SELECT coalesce(array_agg(i.seq ORDER BY i.seq), '{}') INTO v_added FROM inserted i;
  SELECT min(q.seq) INTO v_head FROM ${s}.notes_queue q WHERE q.user_id = p_user AND q.session_id = p_session;
  IF v_head IS NULL THEN
    IF v_holder = p_holder OR v_expires <= clock_timestamp() THEN
      DELETE FROM ${s}.notes_leases l WHERE l.user_id = p_user AND l.session_id = p_session;
      RETURN QUERY SELECT false, NULL::double precision, v_added, NULL::bigint, '[]'::jsonb;
    ELSE
      RETURN QUERY SELECT false, (extract(epoch FROM v_expires - clock_timestamp()) * 1000)::double precision, v_added, NULL::bigint, '[]'::jsonb;
    END IF;
  ELSIF v_holder = p_holder OR v_expires <= clock_timestamp() THEN
    UPDATE ${s}.notes_leases l SET holder = p_holder, expires_at = clock_timestamp() + p_ttl_ms * interval '1 millisecond'
      WHERE l.user_id = p_user AND l.session_id = p_session;
    RETURN QUERY SELECT true, p_ttl_ms, v_added, v_head, (
      SELECT coalesce(jsonb_agg(jsonb_build_object('seq', q.seq, 'kind', q.kind, 'text', q.text, 'at', q.at, 'origin', q.origin) ORDER BY q.seq), '[]'::jsonb)
        FROM ${s}.notes_queue q WHERE q.user_id = p_user AND q.session_id = p_session);
  ELSE
    RETURN QUERY SELECT false, (extract(epoch FROM v_expires - clock_timestamp()) * 1000)::double precision, v_added, v_head, '[]'::jsonb;
  END IF;
END $lease$;
COMMENT ON FUNCTION ${s}.notes_lease(text, text, text, double precision, bigint, text[], text[], double precision[]) IS 'Adds to the queue of (user, session), removes what the asker processed, and gives the asker the lease when it holds it or it is free or expired: the queue when it does.';`;

/** What the notes ledger's migration does, as the migrations table records it. */
export const NOTES_DESCRIPTION = 'notes: session records, profiles, leases and their queue';

/** The notes ledger's tables on schema `s`: records, leases and their queue. */
export const notesTablesSql = (s: string): string => `CREATE TABLE ${s}.notes_sessions (
  user_id text COLLATE "C" NOT NULL,
  session_id text COLLATE "C" NOT NULL,
  value jsonb NOT NULL,
  version integer NOT NULL CHECK (version > 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, session_id)
);
COMMENT ON TABLE ${s}.notes_sessions IS 'The notable facts of one user in one session (the seed''s UserVessel.notableFacts): the record a notes tracker saves, and its version.';
CREATE TABLE ${s}.notes_profiles (
  user_id text COLLATE "C" PRIMARY KEY,
  value jsonb NOT NULL,
  version integer NOT NULL CHECK (version > 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ${s}.notes_profiles IS 'The cross-session profile of one user (the seed''s User.globalFacts): the record a notes tracker saves, and its version.';
CREATE TABLE ${s}.notes_leases (
  user_id text COLLATE "C" NOT NULL,
  session_id text COLLATE "C" NOT NULL,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, session_id)
);
COMMENT ON TABLE ${s}.notes_leases IS 'Which tracker works on one user''s notes in one session, until when: a row only while its queue holds something.';
CREATE TABLE ${s}.notes_queue (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id text COLLATE "C" NOT NULL,
  session_id text COLLATE "C" NOT NULL,
  kind text NOT NULL CHECK (kind IN ('message', 'stage')),
  text text,
  at double precision,
  origin text NOT NULL,
  added_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notes_queue_slot ON ${s}.notes_queue (user_id, session_id, seq);
COMMENT ON TABLE ${s}.notes_queue IS 'What waits for the holder of a (user, session): user messages to extract and ends of stage to merge, in order; removed once done.';
${leaseFunction(s)}`;
