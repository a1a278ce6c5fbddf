import { taskChange } from '../shared/taskChange';

/** Spec section 3: PATCH with status TODO. */
export const { batched, description, writeFor } = taskChange('reopen', { status: 'TODO' });
