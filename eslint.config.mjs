// Lint as the community-node registry does for what ships (nodes, credentials, package.json): both n8n plugins'
// recommended rule sets. The project's tools and tests get ESLint's recommended rules and n8n's rule against silently
// swallowed errors; Node's and jest's globals are allowed (TypeScript checks every name), and the registry's
// restrictions (no process, fs, timers, child processes) are for shipped code only. Zero warnings everywhere.
import js from '@eslint/js';
import tsParser from '@typescript-eslint/parser';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';

export default [
	{ ignores: ['dist/**', '.build/**', 'node_modules/**', 'examples/**', 'scripts/**', 'gulpfile.js', 'eslint.config.mjs'] },
	{
		files: ['**/*.ts', 'package.json'],
		languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module', extraFileExtensions: ['.json'] } },
	},
	{ ...n8nCommunityNodesPlugin.configs.recommended, files: ['nodes/**/*.ts', 'credentials/**/*.ts', 'package.json'] },
	{
		files: ['tools/**/*.ts', 'test/**/*.ts'],
		plugins: { '@n8n/community-nodes': n8nCommunityNodesPlugin },
		rules: {
			...js.configs.recommended.rules,
			// TypeScript checks these itself (noUnusedLocals, every name declared), and ESLint's versions misread types.
			'no-undef': 'off',
			'no-unused-vars': 'off',
			'no-redeclare': 'off',
			'@n8n/community-nodes/no-silent-error-swallowing': 'error',
		},
	},
	{
		files: ['package.json'],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: { ...n8nNodesBase.configs.community.rules },
	},
	{
		files: ['credentials/**/*.ts'],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.credentials.rules,
			// "Only applicable to nodes in the main repository" (its own description): a community package links its
			// docs by URL, which the registry's rule (credential-documentation-url) checks instead.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.nodes.rules,
			// These two older rules want the string 'main'; the registry's newer plugin (node-connection-type-literal)
			// wants NodeConnectionTypes.Main. The two cannot both pass, and the newer one is what the registry checks.
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
];
