import { taskChange } from '../shared/taskChange';

/** Spec section 3: PATCH with status DONE. */
export const { batched, description, writeFor } = taskChange('close', { status: 'DONE' });
