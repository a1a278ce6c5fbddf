/**
 * Milliseconds on a monotonic clock, for intervals: pacing, windows, pauses, timeouts. Date.now() steps when the system
 * clock is set (NTP, a VM resumed, a user), and an interval measured across the step is off by all of it: ten minutes
 * back held every request ten minutes. This clock never steps; it starts near 0 when the process starts, so its
 * readings are not dates: compare them only with each other, and turn a date (an HTTP-date Retry-After) into a
 * duration with Date.now() when it arrives.
 */
export function now(): number {
	return performance.now();
}
