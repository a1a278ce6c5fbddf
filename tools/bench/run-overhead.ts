// The overhead scenario: CPU per 1,000 items with the rate limit off, each contender against the same workflow with
// our node disabled, and n8n's Set node doing the same two expressions for comparison.
import * as W from '../n8n/workflows';
import { cpuOf, errorText, execute, resetSimulator, type MajorRun } from './execute';
import { CONTENDER_NAME, type Contender, type OverheadResult, type OverheadRow } from './results';
import { OVERHEAD_N } from './setup';

export async function runOverhead(
	run: MajorRun,
	contenders: Array<{ contender: Contender; id: string }>,
	disabledId: string,
	setId: string,
): Promise<OverheadResult> {
	const { sim, folder, major } = run;
	resetSimulator(sim, 0, 60_000);
	const baseline = await execute(
		folder,
		disabledId,
		`n8n ${major}.x ${OVERHEAD_N} items, our node disabled (CPU baseline)`,
	);
	const baselineCpu = cpuOf(baseline);
	const per1000 = (total?: number) =>
		total !== undefined && baselineCpu !== undefined
			? (total - baselineCpu) / 1000 / (OVERHEAD_N / 1000)
			: undefined;
	const rows: OverheadRow[] = [];
	const set = await execute(
		folder,
		setId,
		`n8n ${major}.x ${OVERHEAD_N} items through a Set node with the same two expressions`,
	);
	rows.push({
		contender: 'set-node',
		ok: !errorText(set),
		error: errorText(set),
		requests: 0,
		nodeMs: W.nodeRun(set.run, 'Task Backlog')?.executionTime ?? 0,
		cpuMs: cpuOf(set),
		cpuSecondsPer1000: per1000(cpuOf(set)),
		peakRssMb: set.usage?.peakRssMb,
	});
	for (const { contender, id } of contenders) {
		resetSimulator(sim, 0, 60_000);
		const measured = await execute(
			folder,
			id,
			`n8n ${major}.x ${OVERHEAD_N} upserts, ${CONTENDER_NAME[contender]}, no rate limit`,
		);
		rows.push({
			contender,
			ok: !errorText(measured),
			error: errorText(measured),
			requests: sim.requests.length,
			nodeMs: W.nodeRun(measured.run, 'Task Backlog')?.executionTime ?? 0,
			cpuMs: cpuOf(measured),
			cpuSecondsPer1000: per1000(cpuOf(measured)),
			peakRssMb: measured.usage?.peakRssMb,
		});
	}
	return { scenario: 'overhead', major, n: OVERHEAD_N, baselineCpuMs: baselineCpu, rows };
}
