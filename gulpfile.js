// Copies what tsc does not: the node and credential icons, and the nodes' codex JSON files.
const { src, dest } = require('gulp');

function buildAssets() {
	return src(['nodes/**/*.{png,svg,node.json}', 'credentials/**/*.{png,svg}', 'icons/**/*.{png,svg}'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

exports['build:assets'] = buildAssets;
