/* eslint-disable @typescript-eslint/no-require-imports -- test code, never ships */
import { v5 as uuidOracle, validate, version } from 'uuid';

import {
	DEFAULT_EXTERNAL_ID_NAMESPACE,
	isUuid,
	randomUid,
	uuidV5,
} from '../../nodes/shared/identity';
import { PACKAGE_VERSION } from '../../nodes/shared/transport/client';

describe('UUID v5 (RFC 9562) from a namespace and a name, with crypto only', () => {
	const names = [
		'1042',
		'ticket-1',
		'',
		'é-unicode-ü',
		'🎫 emoji',
		'x'.repeat(40),
		'JIRA-77 / helpdesk',
	];

	it.each(names)('matches the uuid package for name %j in the package namespace', (name) => {
		expect(uuidV5(name, DEFAULT_EXTERNAL_ID_NAMESPACE)).toBe(
			uuidOracle(name, DEFAULT_EXTERNAL_ID_NAMESPACE),
		);
	});

	it('matches the uuid package for a name of 1,500 two-byte characters (past the reused buffer)', () => {
		const name = 'ü'.repeat(1500);
		expect(uuidV5(name, DEFAULT_EXTERNAL_ID_NAMESPACE)).toBe(
			uuidOracle(name, DEFAULT_EXTERNAL_ID_NAMESPACE),
		);
	});

	it('matches the uuid package in the RFC namespaces', () => {
		expect(uuidV5('www.example.com', uuidOracle.DNS)).toBe(
			uuidOracle('www.example.com', uuidOracle.DNS),
		);
		expect(uuidV5('https://example.com', uuidOracle.URL)).toBe(
			uuidOracle('https://example.com', uuidOracle.URL),
		);
	});

	it('names derived in several namespaces in turn, a refused namespace and a long name between them, each match the uuid package', () => {
		const namespaces = [DEFAULT_EXTERNAL_ID_NAMESPACE, uuidOracle.DNS, uuidOracle.URL];
		for (const [index, name] of ['1042', 'ü'.repeat(1500), 'ticket-1', '1042', '', 'x'].entries()) {
			const namespace = namespaces[index % namespaces.length];
			expect(uuidV5(name, namespace)).toBe(uuidOracle(name, namespace));
			expect(() => uuidV5(name, 'not-a-uuid')).toThrow('not a UUID');
		}
	});

	it('the same external id always gives the same uid, and another id another uid', () => {
		expect(uuidV5('1042', DEFAULT_EXTERNAL_ID_NAMESPACE)).toBe(
			uuidV5('1042', DEFAULT_EXTERNAL_ID_NAMESPACE),
		);
		expect(uuidV5('1042', DEFAULT_EXTERNAL_ID_NAMESPACE)).not.toBe(
			uuidV5('1043', DEFAULT_EXTERNAL_ID_NAMESPACE),
		);
	});

	it('the package namespace is the v5 of the package name in the URL namespace', () => {
		expect(DEFAULT_EXTERNAL_ID_NAMESPACE).toBe(
			uuidOracle('n8n-nodes-task-backlog', uuidOracle.URL),
		);
	});

	it('refuses a namespace that is not a UUID', () => {
		expect(() => uuidV5('1042', 'not-a-uuid')).toThrow('not a UUID');
	});

	it('random uids are valid version 4 UUIDs', () => {
		const uid = randomUid();
		expect(validate(uid) && version(uid)).toBe(4);
		expect(isUuid(uid)).toBe(true);
		expect(isUuid('3c90c3cc-0d44-4b50-8888-8dd25736052')).toBe(false);
	});
});

describe('package metadata', () => {
	it('the User-Agent version is the package version', () => {
		// Node code may not read package.json at run time; this test keeps the two in step.
		const pkg = require('../../package.json') as { version: string };
		expect(PACKAGE_VERSION).toBe(pkg.version);
	});
});
