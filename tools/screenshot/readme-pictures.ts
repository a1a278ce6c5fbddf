/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, no-console -- tool code, never ships */
// The README's pictures, copied from the editor tests' screenshots (test/e2e/editor.test.ts, n8n 2.x), which save
// them under .build/editor-screenshots/2/. `npm run screenshots` runs those tests, then this:
//   node .build/tools/screenshot/readme-pictures.js [--from <dir>]
// Fails, naming what is missing, when a screenshot is absent (the tests were skipped or failed), so that a stale
// picture is never kept silently.
import * as fs from 'fs';
import * as path from 'path';

const projectDir = path.resolve(__dirname, '..', '..', '..');

/** README picture (relative to the project) ← screenshot of the n8n 2.x run. */
export const README_PICTURES: Array<{ picture: string; shot: string; what: string }> = [
	{
		picture: 'examples/screenshot-node.png',
		shot: 'sync-backlog.png',
		what: "Sync Backlog's parameters (examples/ticket-sync.json)",
	},
	{
		picture: 'examples/screenshot-quick-start.png',
		shot: 'create-executed.png',
		what: 'Task › Create run with Execute step',
	},
	{
		picture: 'examples/screenshot-credential.png',
		shot: 'credential-tested.png',
		what: 'the credential dialog, tested against the service',
	},
	{
		picture: 'examples/screenshot-trigger-urls.png',
		shot: 'trigger-production-url.png',
		what: "the webhook trigger's Production URL",
	},
];

function main(argv: string[]): number {
	const at = argv.indexOf('--from');
	const from =
		at >= 0 && argv[at + 1]
			? path.resolve(argv[at + 1])
			: path.join(projectDir, '.build', 'editor-screenshots', '2');
	const missing = README_PICTURES.filter(({ shot }) => !fs.existsSync(path.join(from, shot)));
	if (missing.length) {
		console.error(
			`missing in ${from}: ${missing.map((m) => m.shot).join(', ')} (did the editor tests on n8n 2.x pass?)`,
		);
		return 1;
	}
	for (const { picture, shot, what } of README_PICTURES) {
		const target = path.join(projectDir, picture);
		fs.mkdirSync(path.dirname(target), { recursive: true });
		fs.copyFileSync(path.join(from, shot), target);
		console.log(`${picture} <- ${shot} (${what})`);
	}
	return 0;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
