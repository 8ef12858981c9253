/**
 * The notes machine as one pure transition, in the manner of xstate's `transition()`: a state
 * (`machine.ts`: the ledger, the conversations it is kept from, what is known of the store) and
 * one input (`inputs.ts`) in, the next state and the effects out. An effect is data: "ask the
 * model this prompt for this user and session", "log this event", "load these notes", "save
 * these records", "this stage merged these sessions". The live tracker runs the effects against
 * a model and a store; the log replay answers them with recorded text and a memory store. Every
 * prompt is built here, so the two cannot drift: the same conversation gives the same prompts in
 * both.
 */
import { isBlank } from '../base/text.js';
import { appendMessage, type ConversationMessage } from './conversation.js';
import { withUnseen } from './blind.js';
import { applyNotesEvent } from './events.js';
import {
  andThen,
  type NotesAssistantMessageRecorded,
  type NotesExtractionRequested,
  type NotesExtractionSettled,
  type NotesInput,
  type NotesLeaseAnswered,
  type NotesLoaded,
  type NotesStageEnded,
  type NotesTransition,
  type NotesUserMessageRecorded,
} from './inputs.js';
import { selectSessionFacts, storedKey } from './ledger.js';
import {
  checkedNotesState,
  EMPTY_CONVERSATION,
  isExtracting,
  isLoaded,
  isLoadNeedless,
  isRead,
  type NotesConversation,
  type NotesSettings,
  type NotesState,
  selectConversation,
  selectUserStorage,
  withConversation,
  withLedger,
} from './machine.js';
import { factKey, isNotesId, type NotesEvent } from './model.js';
import { messageTime } from './messageTime.js';
import { settleExtraction } from './port.js';
import { conversationPrompt, promptTurns } from './prompt.js';
import { mergeReadyStages, onProfileRewriteSettled, onStageEnded, onUnmergedListed, resumeRewrite } from './stage.js';
import {
  addToQueue,
  extractionSettledWithLease,
  onLeaseAnswered,
  onLeaseWoke,
  onSaveAnsweredWithLease,
  pump,
  reportStages,
} from './leaseTransition.js';
import { keepSession, onReleaseRequested, tidyUser } from './release.js';
import { applyLoadAnswer } from './loadAnswer.js';
import { recordChanges, reload, requireLoaded, saveAgain } from './storage.js';
import { applySaveAnswer, onBackedOff } from './saveAnswer.js';
import { answerUnsaved } from './stageAnswers.js';

export { MAX_PROMPT_TURNS } from './prompt.js';

/** Messages no started extraction covers: recorded while one runs, or while the notes load. */
const waiting = (conversation: NotesConversation): number => conversation.requested - conversation.started;

/**
 * Appends a message, keeping what the history window and the next prompt can still show: a
 * follow-up shows one more exchange per message it covers (up to `MAX_PROMPT_TURNS`) before its own.
 */
const record = (
  settings: NotesSettings,
  conversation: NotesConversation,
  message: ConversationMessage,
): ReadonlyArray<ConversationMessage> =>
  appendMessage(
    conversation.transcript,
    message,
    Math.max(settings.historyTurns, promptTurns(waiting(conversation) + 1) + 1),
  );

/**
 * Starts the extraction covering every request so far (a follow-up shows one more exchange per
 * message it folds in, `coalesced`), or only stores the conversation when it keeps no user message.
 */
const startExtraction = (
  state: NotesState,
  user: string,
  session: string,
  conversation: NotesConversation,
  coalesced: number,
): NotesTransition => {
  const { transcript } = conversation;
  let latest = transcript.length - 1;
  while (latest >= 0 && transcript[latest]?.role !== 'user') latest -= 1;
  if (latest < 0) return [withConversation(state, user, session, conversation), []];
  const shown = selectSessionFacts(state.ledger, user, session);
  const prompt = conversationPrompt(transcript, latest, shown, state.settings, coalesced);
  const { blind: _earlier, ...rest } = conversation;
  const blind = state.settings.lease === undefined && !isRead(selectUserStorage(state, user), session);
  const started: NotesConversation = {
    ...rest,
    started: conversation.requested,
    // Timed from the records loaded for it, whatever clocks stamped them (`messageTime`).
    ...(conversation.requestedAt === undefined
      ? {}
      : { startedAt: messageTime(state.ledger, user, session, conversation.requestedAt) }),
    ...(blind ? { blind: shown.map(factKey) } : {}),
  };
  return [withConversation(state, user, session, started), [{ type: 'extract', user, session, prompt }]];
};

const onUserMessage = (state: NotesState, input: NotesUserMessageRecorded): NotesTransition => {
  const { user, session, text, at } = input;
  if (!isNotesId(user) || !isNotesId(session) || typeof text !== 'string' || isBlank(text)) return [state, []];
  const conversation = selectConversation(state, user, session) ?? EMPTY_CONVERSATION;
  const next: NotesConversation = {
    ...conversation,
    transcript: record(state.settings, conversation, { role: 'user', content: text }),
    requested: conversation.requested + 1,
    ...(typeof at === 'number' && Number.isFinite(at) ? { requestedAt: at } : {}),
  };
  const loading = requireLoaded(withConversation(state, user, session, next), user, session);
  // With leases, the message goes to the shared queue: whoever holds the lease extracts it.
  return state.settings.lease === undefined
    ? andThen(loading, (loaded) => resume(loaded, user, session))
    : andThen(loading, (loaded) =>
        addToQueue(loaded, user, session, { kind: 'message', text, ...(next.requestedAt === undefined ? {} : { at }) }),
      );
};

/**
 * True once an extraction may start on the notes of `user` in `session`: they are loaded, and
 * unless a load that failed is tried again (an extraction then waits for what it reads; should it
 * fail again, the extraction goes on with what the tracker has).
 */
const canExtract = (state: NotesState, user: string, session: string): boolean => {
  const storage = selectUserStorage(state, user);
  return isRead(storage, session) || (isLoaded(storage, session) && !storage.loading.includes(storedKey(session)));
};

/**
 * Starts the extraction of the messages no extraction covers yet, once the notes are loaded
 * and none runs (one message folded in per message past the first, as a follow-up does).
 */
const resume = (state: NotesState, user: string, session: string): NotesTransition => {
  const conversation = selectConversation(state, user, session);
  if (
    conversation === undefined ||
    isExtracting(conversation) ||
    waiting(conversation) === 0 ||
    !canExtract(state, user, session)
  )
    return [state, []];
  return startExtraction(state, user, session, conversation, waiting(conversation) - 1);
};

const onAssistantMessage = (state: NotesState, input: NotesAssistantMessageRecorded): NotesTransition => {
  const { user, session, text } = input;
  if (!isNotesId(user) || !isNotesId(session) || typeof text !== 'string' || isBlank(text)) return [state, []];
  const conversation = selectConversation(state, user, session) ?? EMPTY_CONVERSATION;
  const transcript = record(state.settings, conversation, { role: 'assistant', content: text });
  return [withConversation(state, user, session, { ...conversation, transcript }), []];
};

const onExtractionRequested = (state: NotesState, input: NotesExtractionRequested): NotesTransition => {
  const conversation = selectConversation(state, input.user, input.session);
  if (conversation === undefined || isExtracting(conversation) || !canExtract(state, input.user, input.session))
    return [state, []];
  const [next, effects] = startExtraction(
    state,
    input.user,
    input.session,
    { ...conversation, requested: conversation.requested + 1 },
    0,
  );
  return effects.length === 0 ? [state, []] : [next, effects];
};

/**
 * A blind extraction's event (see `blind.ts`): its list with the facts the tracker holds now that
 * its model was not shown (a load that answered meanwhile), marked blind while the record is
 * still unread, so that loading it keeps the stored facts too.
 */
const seeingUnseen = (state: NotesState, conversation: NotesConversation, event: NotesEvent): NotesEvent => {
  if (conversation.blind === undefined || event.type !== 'notes/extracted') return event;
  const { user, session } = event;
  const facts = withUnseen(event.facts, selectSessionFacts(state.ledger, user, session), new Set(conversation.blind));
  const unread = !isRead(selectUserStorage(state, user), session);
  return { ...event, facts, ...(unread ? { blind: conversation.blind } : {}) };
};

const onExtractionSettled = (state: NotesState, input: NotesExtractionSettled): NotesTransition => {
  if (state.settings.lease !== undefined) return extractionSettledWithLease(state, input);
  const { user, session, outcome, at } = input;
  const conversation = selectConversation(state, user, session);
  if (conversation === undefined || !isExtracting(conversation)) return [state, []];
  const event = seeingUnseen(
    state,
    conversation,
    settleExtraction({ user, session }, outcome, at, state.ledger.categories, {
      previous: selectSessionFacts(state.ledger, user, session),
      ...(conversation.startedAt === undefined ? {} : { messagesAt: conversation.startedAt }),
    }),
  );
  const ledger = applyNotesEvent(state.ledger, event);
  const next: NotesConversation = { ...conversation, settled: conversation.started };
  const settled = withConversation(withLedger(state, ledger), user, session, next);
  const recorded: NotesTransition = [settled, [{ type: 'record', event }]];
  const saved = ledger === state.ledger ? recorded : andThen(recorded, (after) => recordChanges(after, user, [event]));
  const followed =
    next.requested === next.started
      ? saved
      : andThen(saved, (after) => startExtraction(after, user, session, next, next.requested - next.started));
  // An end of stage that waited for this extraction merges now, at the time it settled.
  return andThen(followed, (after) => mergeReadyStages(after, user, at));
};

/** The store answered a load: take the records, then extract what waited for them, and merge the ends of stage that did. */
const onLoaded = (state: NotesState, input: NotesLoaded): NotesTransition => {
  const { user, session } = input;
  const loaded = applyLoadAnswer(state, input);
  const resumed =
    state.settings.lease === undefined
      ? andThen(loaded, (next) => resume(next, user, session))
      : andThen(
          andThen(loaded, (next) => reportStages(next, user, session)),
          (next) => pump(next, user, session),
        );
  return andThen(
    andThen(resumed, (next) => mergeReadyStages(next, user, Number.NEGATIVE_INFINITY)),
    (next) => resumeRewrite(next, user),
  );
};

/**
 * The store answered a lease call: take the answer, then merge the ends of stage without a
 * session that waited for the messages it settled here (at the time the last extraction here
 * settled, else when they were asked for).
 */
const onLeaseAnsweredThenMerge = (state: NotesState, input: NotesLeaseAnswered): NotesTransition =>
  andThen(onLeaseAnswered(state, input), (next) =>
    mergeReadyStages(
      next,
      input.user,
      selectConversation(next, input.user, input.session)?.lease?.lastAt ?? Number.NEGATIVE_INFINITY,
    ),
  );

/** An end of stage with leases: of a named session, it goes to the shared queue (merged once, by the holder, in order). */
const onStageEndedWithLease = (state: NotesState, input: NotesStageEnded): NotesTransition => {
  const { user, session, at, id } = input;
  if (!isNotesId(user) || !isNotesId(session) || !Number.isFinite(at)) return onStageEnded(state, input);
  return addToQueue(state, user, session, { kind: 'stage', at, ...(id === undefined ? {} : { stage: id }) });
};

/** The session an input from the runner's caller names is in use again: a release asked for earlier is off. */
const inUse = (state: NotesState, input: NotesInput): NotesState => {
  switch (input.type) {
    case 'notes/userMessageRecorded':
    case 'notes/assistantMessageRecorded':
    case 'notes/loadRequested':
      return isNotesId(input.user) && isNotesId(input.session) ? keepSession(state, input.user, input.session) : state;
    case 'notes/stageEnded':
      return isNotesId(input.user) && isNotesId(input.session) ? keepSession(state, input.user, input.session) : state;
    default:
      return state;
  }
};

/**
 * The transition: the state after `input` and the effects to run. Pure and total: an input it
 * cannot use (bad ids, an answer nothing waits for) leaves the very same state and no effect.
 * Every step ends by answering the ends of stage whose save is no longer under way
 * (`stageAnswers.ts`), then letting go of what was released and has settled (`release.ts`).
 */
export const notesTransition = (state: NotesState, input: NotesInput): NotesTransition => {
  checkedNotesState(state);
  if (typeof input !== 'object' || input === null) return [state, []];
  const stepped = step(inUse(state, input), input);
  if (!isNotesId(input.user)) return stepped;
  return andThen(
    andThen(stepped, (next) => answerUnsaved(next, input.user)),
    (next) => tidyUser(next, input.user),
  );
};

const step = (state: NotesState, input: NotesInput): NotesTransition => {
  switch (input.type) {
    case 'notes/userMessageRecorded':
      return onUserMessage(state, input);
    case 'notes/assistantMessageRecorded':
      return onAssistantMessage(state, input);
    case 'notes/extractionRequested':
      return onExtractionRequested(state, input);
    case 'notes/extractionSettled':
      return onExtractionSettled(state, input);
    case 'notes/stageEnded':
      return state.settings.lease === undefined ? onStageEnded(state, input) : onStageEndedWithLease(state, input);
    case 'notes/profileRewriteSettled':
      return onProfileRewriteSettled(state, input);
    case 'notes/loadRequested':
      if (!isNotesId(input.user) || !isNotesId(input.session)) return [state, []];
      return isLoadNeedless(state, input.user, input.session) ? [state, []] : reload(state, input.user, input.session);
    case 'notes/loaded':
      return onLoaded(state, input);
    case 'notes/saved':
      return state.settings.lease === undefined ? applySaveAnswer(state, input) : onSaveAnsweredWithLease(state, input);
    case 'notes/unmergedListed':
      return onUnmergedListed(state, input);
    case 'notes/leaseAnswered':
      return onLeaseAnsweredThenMerge(state, input);
    case 'notes/leaseWoke':
      return onLeaseWoke(state, input.user, input.session);
    case 'notes/releaseRequested':
      return onReleaseRequested(state, input);
    case 'notes/backedOff':
      return isNotesId(input.user) ? onBackedOff(state, input.user) : [state, []];
    case 'notes/saveRetried':
      // With leases, a holder tries its failed saves again itself.
      return state.settings.lease === undefined && isNotesId(input.user) ? saveAgain(state, input.user) : [state, []];
    default:
      return [state, []];
  }
};
