// Lint as the community-node registry does: both n8n plugins' recommended rule sets, zero warnings allowed.
import tsParser from '@typescript-eslint/parser';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';

export default [
	{ ignores: ['dist/**', '.build/**', 'node_modules/**', 'test/**', 'tools/**', 'examples/**', 'scripts/**', 'gulpfile.js'] },
	{
		files: ['**/*.ts', 'package.json'],
		languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module', extraFileExtensions: ['.json'] } },
	},
	n8nCommunityNodesPlugin.configs.recommended,
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
