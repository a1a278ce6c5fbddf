/**
 * One limiter per token (limiterFor), whatever the credential: the server counts requests per token in one window, so
 * two credentials with the same token but different "Requests per Minute" share it, at the tighter of their
 * configurations, and keep what the server's 429s taught whichever of them asks. Whatever the Base URL, and held by
 * each execution until it ends: limiter-per-token.test.ts.
 */
import {
	CONFIGURATION_KEPT_MS,
	MIN_SHARE,
	limiterFor,
} from '../../nodes/shared/transport/rateLimiter';

const MINUTE = 60_000;

describe('two credentials on one token with different Requests per Minute', () => {
	it('do not reset each other: the rate a 429 cut to stays when the other asks for the limiter', async () => {
		const first = limiterFor('token A', 60, MINUTE).limiter;
		(await first.acquire())(429);
		const cut = Math.floor(60 * MIN_SHARE);
		expect(first.allowance).toBe(cut);
		expect(limiterFor('token A', 30, MINUTE).limiter.allowance).toBe(cut);
		const again = limiterFor('token A', 60, MINUTE).limiter;
		expect(again).toBe(first);
		expect(again.allowance).toBe(cut);
	});

	it('share one limiter at the tighter configuration while both are in use; the looser takes over once the tighter has not been asked for in a while', () => {
		jest.useFakeTimers();
		try {
			expect(limiterFor('token B', 60, MINUTE).limiter.allowance).toBe(60);
			expect(limiterFor('token B', 30, MINUTE).limiter.allowance).toBe(30);
			expect(limiterFor('token B', 60, MINUTE).limiter.allowance).toBe(30);
			// lower per minute, but 20 per 10 s is 120 per minute: the looser
			expect(limiterFor('token B', 20, 10_000).limiter.allowance).toBe(30);
			jest.advanceTimersByTime(CONFIGURATION_KEPT_MS + 1);
			expect(limiterFor('token B', 60, MINUTE).limiter.allowance).toBe(60);
		} finally {
			jest.useRealTimers();
		}
	});
});
