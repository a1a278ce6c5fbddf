import { taskChange } from '../shared/taskChange';

/** Spec section 3: PATCH with status DONE. */
export const { batched, description, execute } = taskChange('close', { status: 'DONE' });
