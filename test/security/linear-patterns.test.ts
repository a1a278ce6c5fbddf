// S5 of the security review: no pattern on a server's message takes more than linear time in its length. A 422 quotes
// what it refused (pydantic-style services quote the input in every 422), and the patterns that read a batch's 422
// once took time with the square of the message's length, blocking n8n's main loop (7.4 s for "max" and 120,000
// spaces). Timed against itself at two sizes, so a slow machine slows both alike.

import type { Simulator } from '../../tools/simulator/simulator';
import { runBacklog, uidOf, upsertByTicket, useSimulator } from '../helpers/backlog';

let sim: Simulator;
useSimulator((started) => (sim = started));

/** How long a Create or Update of two tickets takes when the server refuses one with a 422 quoting `spaces` spaces. */
async function refusedWith(spaces: number): Promise<number> {
	sim.configure({
		refuseContent: [{ text: 'SLOW-1', status: 422, message: `max${' '.repeat(spaces)}` }],
	});
	const started = Date.now();
	const run = await runBacklog(
		sim,
		{ ...upsertByTicket, requestOptions: { maxAttempts: 1 } },
		{
			items: [
				{ id: `L-${spaces}-1`, title: 'Invoice SLOW-1' },
				{ id: `L-${spaces}-2`, title: 'Fine' },
			],
			continueOnFail: true,
		},
	);
	const elapsed = Date.now() - started;
	expect(String(run.json[0].error)).toContain('422');
	expect(sim.tasks.has(uidOf(`L-${spaces}-2`))).toBe(true);
	return elapsed;
}

describe('A 422 quoting a long refused value is read in time linear in its length', () => {
	it('a 422 of "max" and 100,000 spaces takes about as long to read as one of 10,000 (not 100 times longer)', async () => {
		await refusedWith(1_000); // warms up the harness and the connection
		const small = await refusedWith(10_000);
		const large = await refusedWith(100_000);
		// Linear: the large one costs a few ms more (a longer body to send and parse); quadratic: seconds.
		expect(large).toBeLessThan(small * 10 + 2_000);
	}, 120_000);
});
