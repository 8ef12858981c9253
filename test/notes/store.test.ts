/**
 * The memory notes store passes the conformance suite, answering at once; so does the same store
 * answering every call with a promise, as a database adapter would.
 */
import { memoryNotesStore } from '../../src/notes/store.js';
import { answeringLater, describeNotesStoreConformance } from './storeConformance.js';

describeNotesStoreConformance('memoryNotesStore', () => memoryNotesStore());
describeNotesStoreConformance('memoryNotesStore answering with promises', () => answeringLater(memoryNotesStore()));
