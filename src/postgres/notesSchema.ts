/**
 * The notes ledger's tables, the second step of the stores' schema: per (user, session) the
 * record of the facts (the seed's `UserVessel.notableFacts`), per user the profile record (the
 * seed's `User.globalFacts`), each a JSONB value with a version; and the leases that let
 * trackers in several processes take turns on one (user, session), with the queue of what
 * waits for the holder (user messages to extract, ends of stage to merge).
 */
/** The lease function's arguments: as version 2 made it, and with the items' keys since version 3. */
const LEASE_ARGUMENTS = 'text, text, text, double precision, bigint, text[], text[], double precision[]';
const KEYED_LEASE_ARGUMENTS = `${LEASE_ARGUMENTS}, text[]`;

/**
 * How the lease call adds its items to the queue: all at once (version 2), or one by one, an
 * item whose key is in the queue already not again, answering the number it has (version 3).
 * The lease row's lock makes the calls of one (user, session) take turns, so no two add one key.
 */
const addItems = (s: string, keyed: boolean): string =>
  keyed
    ? `FOR v_at IN 1 .. coalesce(array_length(p_kinds, 1), 0) LOOP
    v_seq := NULL;
    IF p_keys[v_at] IS NOT NULL THEN
      SELECT q.seq INTO v_seq FROM ${s}.notes_queue q
        WHERE q.user_id = p_user AND q.session_id = p_session AND q.item_key = p_keys[v_at];
    END IF;
    IF v_seq IS NULL THEN
      INSERT INTO ${s}.notes_queue (user_id, session_id, kind, text, at, origin, item_key)
        VALUES (p_user, p_session, p_kinds[v_at], p_texts[v_at], p_ats[v_at], p_holder, p_keys[v_at])
        RETURNING seq INTO v_seq;
    END IF;
    v_added := v_added || v_seq;
  END LOOP;`
    : `WITH inserted AS (
    INSERT INTO ${s}.notes_queue (user_id, session_id, kind, text, at, origin)
    SELECT p_user, p_session, u.kind, u.text, u.at, p_holder
      FROM unnest(p_kinds, p_texts, p_ats) WITH ORDINALITY AS u(kind, text, at, n) ORDER BY u.n
    RETURNING seq
  ) SELECT coalesce(array_agg(i.seq ORDER BY i.seq), '{}') INTO v_added FROM inserted i;`;

/**
 * The lease call (`notes_lease`): one statement, so taking a turn and adding to the queue happen
 * at one moment. `fenced` (version 4): it also answers the fence of the holder's turn, a new one
 * (the transaction's id) whenever the lease changes hands or is taken after it was freed.
 */
const leaseFunction = (s: string, keyed: boolean, fenced = false): string => `CREATE FUNCTION ${s}.notes_lease(
  p_user text, p_session text, p_holder text, p_ttl_ms double precision, p_done bigint,
  p_kinds text[], p_texts text[], p_ats double precision[]${keyed ? ', p_keys text[]' : ''}
) RETURNS TABLE (held boolean, expires_in_ms double precision, added bigint[], head bigint, queue jsonb${fenced ? ', fence bigint' : ''})
LANGUAGE plpgsql AS $lease$
DECLARE
  v_holder text;
  v_expires timestamptz;
  v_added bigint[]${keyed ? " := '{}'" : ''};
  v_head bigint;${keyed ? '\n  v_seq bigint;\n  v_at integer;' : ''}${fenced ? '\n  v_fence bigint;' : ''}
BEGIN
  -- The lease row is the slot's lock: made when missing, locked, and gone again once nothing waits.
  LOOP
    INSERT INTO ${s}.notes_leases AS l (user_id, session_id, holder, expires_at)
      VALUES (p_user, p_session, '', '-infinity') ON CONFLICT DO NOTHING;
    SELECT l.holder, l.expires_at${fenced ? ', l.fence' : ''} INTO v_holder, v_expires${fenced ? ', v_fence' : ''} FROM ${s}.notes_leases l
      WHERE l.user_id = p_user AND l.session_id = p_session FOR UPDATE;
    EXIT WHEN FOUND;
  END LOOP;
  IF p_done IS NOT NULL THEN
    DELETE FROM ${s}.notes_queue q WHERE q.user_id = p_user AND q.session_id = p_session AND q.seq <= p_done;
  END IF;
  ${addItems(s, keyed)}
  SELECT min(q.seq) INTO v_head FROM ${s}.notes_queue q WHERE q.user_id = p_user AND q.session_id = p_session;
  IF v_head IS NULL THEN
    IF v_holder = p_holder OR v_expires <= clock_timestamp() THEN
      DELETE FROM ${s}.notes_leases l WHERE l.user_id = p_user AND l.session_id = p_session;
      RETURN QUERY SELECT false, NULL::double precision, v_added, NULL::bigint, '[]'::jsonb${fenced ? ', NULL::bigint' : ''};
    ELSE
      RETURN QUERY SELECT false, (extract(epoch FROM v_expires - clock_timestamp()) * 1000)::double precision, v_added, NULL::bigint, '[]'::jsonb${fenced ? ', NULL::bigint' : ''};
    END IF;
  ELSIF v_holder = p_holder OR v_expires <= clock_timestamp() THEN${
    fenced
      ? `
    -- A holder that renews keeps its fence; a lease that changes hands, or is taken again once freed,
    -- gets a new one: this transaction's id, never reused, and no sequence for the agents' role to be granted.
    IF v_holder IS DISTINCT FROM p_holder OR v_fence IS NULL THEN
      v_fence := pg_current_xact_id()::text::bigint;
    END IF;`
      : ''
  }
    UPDATE ${s}.notes_leases l SET holder = p_holder, expires_at = clock_timestamp() + p_ttl_ms * interval '1 millisecond'${fenced ? ', fence = v_fence' : ''}
      WHERE l.user_id = p_user AND l.session_id = p_session;
    RETURN QUERY SELECT true, p_ttl_ms, v_added, v_head, (
      SELECT coalesce(jsonb_agg(jsonb_build_object('seq', q.seq, 'kind', q.kind, 'text', q.text, 'at', q.at, 'origin', q.origin) ORDER BY q.seq), '[]'::jsonb)
        FROM ${s}.notes_queue q WHERE q.user_id = p_user AND q.session_id = p_session)${fenced ? ', v_fence' : ''};
  ELSE
    RETURN QUERY SELECT false, (extract(epoch FROM v_expires - clock_timestamp()) * 1000)::double precision, v_added, v_head, '[]'::jsonb${fenced ? ', NULL::bigint' : ''};
  END IF;
END $lease$;
COMMENT ON FUNCTION ${s}.notes_lease(${keyed ? KEYED_LEASE_ARGUMENTS : LEASE_ARGUMENTS}) IS 'Adds to the queue of (user, session)${keyed ? ' (an item whose key is queued already, not again)' : ''}, removes what the asker processed, and gives the asker the lease when it holds it or it is free or expired: the queue when it does${fenced ? ', and the fence of its turn' : ''}.';`;

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
${leaseFunction(s, false)}`;

/** What the migration that names queued items does, as the migrations table records it. */
export const NOTES_KEYS_DESCRIPTION = 'notes: queued items named by their key, added once';

/** The queue's items get their key (`LeaseItem.key`), and the lease call adds an item once per key. */
export const notesKeysSql = (s: string): string => `ALTER TABLE ${s}.notes_queue ADD COLUMN item_key text;
COMMENT ON COLUMN ${s}.notes_queue.item_key IS 'The name the adding tracker gave the item: a call made again after its answer was lost does not add it twice.';
CREATE UNIQUE INDEX notes_queue_key ON ${s}.notes_queue (user_id, session_id, item_key) WHERE item_key IS NOT NULL;
DROP FUNCTION ${s}.notes_lease(${LEASE_ARGUMENTS});
${leaseFunction(s, true)}`;

/** What the migration that fences saves by their lease does, as the migrations table records it. */
export const NOTES_FENCES_DESCRIPTION = 'notes: leases fence the saves made under them';

/**
 * Each turn of a lease gets a fence (`LeaseAnswer.fence`), which a save made under it names: the
 * save checks it in its transaction, so a holder that lost its lease writes nothing.
 */
export const notesFencesSql = (s: string): string => `ALTER TABLE ${s}.notes_leases ADD COLUMN fence bigint;
COMMENT ON COLUMN ${s}.notes_leases.fence IS 'The fence of the holder''s turn: a save made under the lease names it, and is refused once the lease has another.';
DROP FUNCTION ${s}.notes_lease(${KEYED_LEASE_ARGUMENTS});
${leaseFunction(s, true, true)}`;
