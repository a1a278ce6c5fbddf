// How the bench writes numbers, durations and Markdown tables (the README takes its rows from these tables).
import type { Server } from './results';

export const seconds = (ms: number) => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);

export const fmt = (value: number | undefined, digits = 0) =>
	value === undefined || Number.isNaN(value)
		? 'n/a'
		: value.toLocaleString('en-US', {
				maximumFractionDigits: digits,
				minimumFractionDigits: digits,
			});

/** A Markdown table: the first column left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][]): string {
	const widths = header.map((h, i) =>
		Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)),
	);
	const line = (cells: string[]) =>
		`| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
	return [
		line(header),
		`|${widths.map((w, i) => (i === 0 ? ':' : '-') + '-'.repeat(w) + (i === 0 ? '-' : ':')).join('|')}|`,
		...rows.map(line),
	].join('\n');
}

export const serverLabel = (server: Server) =>
	server === 'capped50' ? 'limit 50, undocumented' : 'open';
