#!/usr/bin/env node
// npm run verify: the static analysis of n8n's community-package scanner (@n8n/scan-community-package), run locally
// on this package as it would be published. Exits 1 when the analysis finds a problem.
//
// The scanner's own command line (`npx @n8n/scan-community-package <name>`) only scans a published package: it
// downloads it from the registry, requires an npm provenance attestation, fetches the attested GitHub source, then
// lints both. Its exported analyzePackage() is that lint step alone; this script runs it on the same two legs, with
// the same file patterns as the scanner's analyzePackageByName():
//   - the source: package.json and nodes/, credentials/ (the scanner's SOURCE_FILE_PATTERNS) of this working tree;
//   - the tarball: `npm pack` of this package, extracted, its compiled .js and its package.json.
// It also checks that the tarball holds LICENSE and every file named in package.json's "n8n" section.
//
// The scanner's command line prints a failed scan but exits 0; this script exits 1 on any finding.
// Run it through `npm run verify`, which builds first and puts the pinned scanner on PATH with npx:
//   npm run build && npx --yes --package=@n8n/scan-community-package@<version> -- node scripts/verify.mjs
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SCANNER = '@n8n/scan-community-package';
const SCANNER_BIN = 'scan-community-package';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The scanner's package folder: from the bin npx put on PATH, else from this project's node_modules. */
function findScanner() {
	for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
		const bin = path.join(dir, SCANNER_BIN);
		if (fs.existsSync(bin)) return path.resolve(path.dirname(fs.realpathSync(bin)), '..');
	}
	try {
		return path.dirname(createRequire(path.join(root, 'package.json')).resolve(`${SCANNER}/package.json`));
	} catch {
		console.error(`${SCANNER} not found. Run this script with \`npm run verify\`, which provides it through npx.`);
		process.exit(2);
	}
}

const scannerDir = findScanner();
const scannerVersion = JSON.parse(fs.readFileSync(path.join(scannerDir, 'package.json'), 'utf8')).version;
// The scanner makes a temporary folder when it loads; have `tmp` (the scanner's copy) remove it at exit.
createRequire(path.join(scannerDir, 'package.json'))('tmp').setGracefulCleanup();
const { analyzePackage, SOURCE_FILE_PATTERNS } = await import(
	pathToFileURL(path.join(scannerDir, 'scanner', 'scanner.mjs')).href
);
const TARBALL_FILE_PATTERNS = ['**/*.js', 'package.json']; // as analyzePackageByName() lints the tarball

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'verify-'));
let failed = false;
try {
	const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
	console.log(`${SCANNER}@${scannerVersion}: static analysis of ${pkg.name}@${pkg.version}\n`);

	// The tarball, exactly as `npm publish` would build it from the current dist/.
	const [packed] = JSON.parse(
		execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8' }),
	);
	const tarball = path.join(work, packed.filename);
	const extracted = path.join(work, 'package');
	fs.mkdirSync(extracted);
	execFileSync('tar', ['-xzf', tarball, '-C', extracted, '--strip-components=1']);
	console.log(`Packed ${packed.filename}: ${packed.entryCount} files, ${packed.size} bytes`);

	const shipped = new Set(packed.files.map((file) => file.path));
	const required = ['LICENSE', ...(pkg.n8n?.nodes ?? []), ...(pkg.n8n?.credentials ?? [])];
	const missing = required.filter((file) => !shipped.has(file));
	if (missing.length > 0) {
		failed = true;
		console.log(`❌ Missing from the tarball: ${missing.join(', ')}`);
	} else {
		console.log(`✅ The tarball holds LICENSE and the ${required.length - 1} files named in package.json "n8n"`);
	}

	const legs = [
		['source (package.json, nodes/, credentials/)', root, SOURCE_FILE_PATTERNS],
		[`tarball ${packed.filename} (compiled .js, package.json)`, extracted, TARBALL_FILE_PATTERNS],
	];
	for (const [label, dir, patterns] of legs) {
		const result = await analyzePackage(dir, patterns);
		if (result.passed) {
			console.log(`✅ Analysis passed: ${label}${result.message ? ` (${result.message})` : ''}`);
		} else {
			failed = true;
			console.log(`❌ Analysis failed: ${label}: ${result.message}`);
			if (result.details) console.log(result.details);
		}
	}
} finally {
	fs.rmSync(work, { recursive: true, force: true });
}

console.log(failed ? '\n❌ verify failed' : '\n✅ verify passed');
process.exitCode = failed ? 1 : 0;
