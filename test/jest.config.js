// Two projects: fast tests against the simulator, and the real-n8n end-to-end suite (slow, run one file at a time).
const rootDir = require('path').resolve(__dirname, '..');
const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json' }] };

module.exports = {
	rootDir,
	projects: [
		{
			displayName: 'unit',
			rootDir,
			testEnvironment: 'node',
			transform,
			testMatch: ['<rootDir>/test/**/*.test.ts'],
			// scale-out runs OS processes against one token and counts 429s: it runs with the e2e files, one at a time.
			testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/', '<rootDir>/test/scale-out/'],
		},
		{
			// The node's tests again, on a simulator that takes the unfriendly reading of every open point of the spec.
			displayName: 'unit-strict',
			rootDir,
			testEnvironment: 'node',
			transform,
			// node/ holds spec-readings/, the node under each reading of the spec's open points.
			testMatch: ['<rootDir>/test/node/**/*.test.ts', '<rootDir>/test/transport/**/*.test.ts', '<rootDir>/test/triggers/poll-trigger.test.ts'],
			// Run in unit only: input values are checked before any request, and Retry-After comes from plain servers.
			testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/node/input-values.test.ts', '<rootDir>/test/transport/retry-after.test.ts'],
			setupFiles: ['<rootDir>/test/helpers/strict-profile.ts'],
		},
		{
			displayName: 'e2e',
			rootDir,
			testEnvironment: 'node',
			transform,
			testMatch: ['<rootDir>/test/e2e/**/*.test.ts', '<rootDir>/test/scale-out/**/*.test.ts'],
			setupFilesAfterEnv: ['<rootDir>/test/e2e/lib/setup.ts'],
		},
		{
			// The node and trigger files in real n8n again, against the strict simulator.
			displayName: 'e2e-strict',
			rootDir,
			testEnvironment: 'node',
			transform,
			testMatch: ['<rootDir>/test/e2e/node.test.ts', '<rootDir>/test/e2e/triggers.test.ts'],
			setupFiles: ['<rootDir>/test/helpers/strict-profile.ts'],
			setupFilesAfterEnv: ['<rootDir>/test/e2e/lib/setup.ts'],
		},
	],
};
