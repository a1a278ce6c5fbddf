// Which fault families the CI seeds draw from: all of them but the ones today's code is known not to survive. Empty
// this list as the fixes land (issue 44, item 1); `npm run simulate -- --all-faults` runs everything.
import type { Family } from './workload';
import { FAMILIES } from './workload';

/** Families the simulation finds failures in on today's main, each with what fails and why. */
export const KNOWN_FAILING_FAMILIES: Partial<Record<Family, string>> = {};

/** The families the CI seeds draw from. */
export const CI_FAMILIES: Family[] = FAMILIES.filter(
	(family) => !(family in KNOWN_FAILING_FAMILIES),
);
