import { taskChange } from '../shared/taskChange';

/** The service advises archiving or closing tasks rather than deleting them. */
export const { batched, description, writeFor } = taskChange('archive', { archived: true });
