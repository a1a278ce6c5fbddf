// The rules of issue "correct under every reading of the spec's open points", one file per point, each checked on the
// simulator's observable state. The files run in the jest projects unit (lenient simulator) and unit-strict (strict):
// every test must hold under both readings; tests that pin one reading set it themselves. docs/spec-open-points.md
// names the tests of each point.
import { DEFAULT_EXTERNAL_ID_NAMESPACE, uuidV5 } from '../../../nodes/shared/identity';
import type { SimulatorOptions } from '../../../tools/simulator/simulator';

/** No reading set one by one: each test starts from the profile's readings (useSimulator sets them before each test). */
export const PROFILE_READINGS: SimulatorOptions = { readings: undefined, maxBatchSize: undefined };

export const uidOf = (id: string) => uuidV5(id, DEFAULT_EXTERNAL_ID_NAMESPACE);
export const upsert = {
	resource: 'task',
	operation: 'upsert',
	identifyBy: 'externalId',
	externalId: '={{ $json.id }}',
	title: '={{ $json.title }}',
};
export const tickets = (n: number, title = (i: number) => `Ticket ${i}`) =>
	Array.from({ length: n }, (_, i) => ({ id: `T-${i + 1}`, title: title(i + 1) }));
