/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/require-node-api-error -- tool code, never ships */
// The one command-line parser of the tools (simulator, demo, bench, screenshot). A flag is `--name`; one that takes
// a value takes it as `--name=value` or `--name value`; an optional value is the next word unless it is a flag.
// `--help` (or `-h`) prints the usage and exits 0; a wrong command line prints what is wrong and the usage, and
// exits 2. What a flag means stays with each tool: it walks the flags in order with the readers of `Arg`.

/** `switch`: no value; `value`: a value is required; `optional`: a value may follow. */
export type FlagKind = 'switch' | 'value' | 'optional';

/** A wrong command line: the message is printed above the usage. */
export class ArgsError extends Error {}

/** One flag as given, with readers that check its value. */
export class Arg {
	constructor(
		/** the flag as given, e.g. `--port` */
		readonly flag: string,
		/** its value (undefined for a switch, or an optional value that was left out) */
		readonly raw: string | undefined,
	) {}

	/** The value as it is (it may be empty). */
	text(): string {
		if (this.raw === undefined) throw new ArgsError(`${this.flag} needs a value`);
		return this.raw;
	}

	/** A value that is not empty. */
	nonEmpty(what = 'a value'): string {
		const text = this.text();
		if (text === '') throw new ArgsError(`${this.flag} needs ${what}`);
		return text;
	}

	/** Any number (fractions and negatives too). */
	number(): number {
		return toNumber(this.flag, this.raw);
	}

	/** A whole number from min to max. */
	int(min: number, max: number): number {
		const n = Number(this.raw);
		if (
			this.raw === undefined ||
			this.raw.trim() === '' ||
			!Number.isInteger(n) ||
			n < min ||
			n > max
		) {
			throw new ArgsError(`${this.flag} needs a whole number ${min}-${max}`);
		}
		return n;
	}

	/** A comma-separated list, each part trimmed, empty parts dropped (an empty value is an empty list). */
	list(): string[] {
		return this.text()
			.split(',')
			.map((part) => part.trim())
			.filter(Boolean);
	}

	/** A comma-separated list of numbers (an empty value is an empty list). */
	numbers(): number[] {
		return this.list().map((part) => toNumber(this.flag, part));
	}

	/** One of the given values. */
	oneOf<T extends string>(values: readonly T[]): T {
		const text = this.text();
		if (!(values as readonly string[]).includes(text))
			throw new ArgsError(`${this.flag} must be one of ${values.join(', ')}`);
		return text as T;
	}
}

function toNumber(flag: string, raw: string | undefined): number {
	const n = Number(raw);
	if (raw === undefined || raw.trim() === '' || Number.isNaN(n))
		throw new ArgsError(`${flag} needs a number`);
	return n;
}

export interface CommandLine {
	/** printed by --help, and under a wrong command line */
	usage: string;
	/** every flag, as `--name`, with what it takes */
	flags: Record<string, FlagKind>;
}

/**
 * Splits argv into flags (in order) and hands each to `onFlag`, which may throw an ArgsError for a value it cannot
 * use. `--help`/`-h` anywhere prints the usage and exits 0 before any flag is handed on.
 */
export function readArgs(argv: string[], cli: CommandLine, onFlag: (arg: Arg) => void): void {
	if (argv.includes('--help') || argv.includes('-h')) {
		process.stdout.write(cli.usage);
		process.exit(0);
	}
	try {
		for (let i = 0; i < argv.length; i++) {
			const word = argv[i];
			const eq = word.startsWith('--') ? word.indexOf('=') : -1;
			const flag = eq > 0 ? word.slice(0, eq) : word;
			const inline = eq > 0 ? word.slice(eq + 1) : undefined;
			const kind = cli.flags[flag];
			if (kind === undefined) throw new ArgsError(`Unknown argument: ${word}`);
			if (kind === 'switch') {
				if (inline !== undefined) throw new ArgsError(`${flag} takes no value`);
				onFlag(new Arg(flag, undefined));
			} else if (inline !== undefined) {
				onFlag(new Arg(flag, inline));
			} else if (kind === 'value') {
				onFlag(new Arg(flag, argv[++i]));
			} else {
				const next = argv[i + 1];
				onFlag(
					new Arg(
						flag,
						next !== undefined && next !== '' && !next.startsWith('--') ? argv[++i] : undefined,
					),
				);
			}
		}
	} catch (e) {
		if (!(e instanceof ArgsError)) throw e;
		fail(e.message, cli.usage);
	}
}

/** A wrong command line found after the flags were read (a flag that is missing, two that do not go together). */
export function fail(message: string, usage: string): never {
	process.stderr.write(`${message}\n\n${usage}`);
	process.exit(2);
}
