import { taskChange } from '../shared/taskChange';

/** Spec section 3: PATCH with status TODO. */
export const { batched, description, execute } = taskChange('reopen', { status: 'TODO' });
