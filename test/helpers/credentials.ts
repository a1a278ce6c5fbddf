/**
 * The harness's stand-ins for what n8n keeps in packages/cli (database, encryption): the credential types a test hands
 * in, their data in memory, and `authenticate` applied as packages/cli `CredentialsHelper.authenticate` does (for
 * `generic` auth, each `={{...}}` key and value resolved with the real n8n-workflow expression evaluator). Used by the
 * node runner (run-node.ts) and the trigger harness (test/triggers/harness.ts).
 */
import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	IExecuteData,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeParameters,
	INodeProperties,
	IRequestOptionsSimplified,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
	ICredentialsExpressionResolveValues,
	ICredentialsEncrypted,
} from 'n8n-workflow';
import {
	ICredentials,
	ICredentialsHelper,
	isExpression,
	NodeHelpers,
	UnexpectedError,
	Workflow,
} from 'n8n-workflow';

/** Credential-type registry for the harness (only the types a test hands in). */
export class TestCredentialTypes {
	private readonly types = new Map<string, ICredentialType>();

	add(type: ICredentialType | undefined) {
		if (type) this.types.set(type.name, type);
	}

	get(name: string): ICredentialType | undefined {
		return this.types.get(name);
	}

	parentTypes(name: string): string[] {
		const own = this.types.get(name)?.extends ?? [];
		return [...own, ...own.flatMap((parent) => this.parentTypes(parent))];
	}
}

/**
 * In-memory replacement for packages/cli `CredentialsHelper`: no database, no encryption,
 * same `authenticate` semantics.
 */
export class TestCredentialsHelper extends ICredentialsHelper {
	constructor(
		private readonly credentialTypes: TestCredentialTypes,
		private readonly credentialData: Record<string, ICredentialDataDecryptedObject>,
	) {
		super();
	}

	getParentTypes(name: string): string[] {
		return this.credentialTypes.parentTypes(name);
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const credentialType = this.credentialTypes.get(typeName);
		const authenticate = credentialType?.authenticate;
		if (!authenticate) return requestOptions as IHttpRequestOptions;
		if (typeof authenticate === 'function') {
			return await authenticate(credentials, requestOptions as IHttpRequestOptions);
		}
		if (!workflow || !node) {
			throw new UnexpectedError(
				'Workflow and node are required for declarative credential authentication',
			);
		}
		if (requestOptions.headers === undefined) requestOptions.headers = {};
		if (authenticate.type === 'generic') {
			const target = requestOptions as unknown as Record<
				string,
				Record<string, unknown> | undefined
			>;
			for (const [outerKey, outerValue] of Object.entries(authenticate.properties)) {
				for (const [key, value] of Object.entries(outerValue as Record<string, unknown>)) {
					const keyResolved = resolveCredentialValue(key, credentials, workflow, node);
					const valueResolved = resolveCredentialValue(
						value as string,
						credentials,
						workflow,
						node,
					);
					target[outerKey] ??= {};
					target[outerKey]![keyResolved] = valueResolved;
				}
			}
		}
		return requestOptions as IHttpRequestOptions;
	}

	async preAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		_node: INode,
		credentialsExpired: boolean,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		// Same trigger as packages/cli: a hidden `expirable` property that is empty or expired.
		const credentialType = this.credentialTypes.get(typeName);
		if (typeof credentialType?.preAuthentication !== 'function') return undefined;
		const expirable = credentialType.properties.find(
			(p) => p.type === 'hidden' && p.typeOptions?.expirable === true,
		);
		if (expirable === undefined) return undefined;
		if (credentials[expirable.name] !== '' && !credentialsExpired) return undefined;
		const output = await credentialType.preAuthentication.call(helpers, credentials);
		if (output[expirable.name] === undefined) return undefined;
		return Object.assign(credentials, output);
	}

	async runPreAuthentication(): Promise<ICredentialDataDecryptedObject | undefined> {
		return undefined;
	}

	async getCredentials(
		nodeCredentials: INodeCredentialsDetails,
		type: string,
	): Promise<ICredentials> {
		return new InMemoryCredentials(nodeCredentials, type, this.credentialData);
	}

	async getDecrypted(
		_additionalData: IWorkflowExecuteAdditionalData,
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
		mode: WorkflowExecuteMode,
		_executeData?: IExecuteData,
		_raw?: boolean,
		expressionResolveValues?: ICredentialsExpressionResolveValues,
	): Promise<ICredentialDataDecryptedObject> {
		const data = this.credentialData[type];
		if (data === undefined) {
			throw new UnexpectedError(`The harness has no credential of type "${type}"`);
		}
		return applyCredentialDefaults(
			this.credentialTypes.get(type),
			data,
			mode,
			expressionResolveValues?.workflow,
		);
	}

	async updateCredentials(): Promise<void> {}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	getCredentialsProperties(type: string): INodeProperties[] {
		return this.credentialTypes.get(type)?.properties ?? [];
	}
}

/** Unencrypted stand-in for n8n-core `Credentials` (which needs the instance's encryption key). */
class InMemoryCredentials extends ICredentials {
	constructor(
		nodeCredentials: INodeCredentialsDetails,
		type: string,
		private readonly store: Record<string, ICredentialDataDecryptedObject>,
	) {
		super(nodeCredentials, type);
	}

	async getData(): Promise<ICredentialDataDecryptedObject> {
		return { ...(this.store[this.type] ?? {}) };
	}

	getDataToSave(): ICredentialsEncrypted {
		return {
			id: this.id,
			name: this.name,
			type: this.type,
			data: JSON.stringify(this.store[this.type] ?? {}),
		};
	}

	async setData(data: ICredentialDataDecryptedObject): Promise<void> {
		this.store[this.type] = { ...data };
	}

	async updateData(
		toUpdate: Partial<ICredentialDataDecryptedObject>,
		toDelete: string[] = [],
	): Promise<void> {
		const next = {
			...(this.store[this.type] ?? {}),
			...toUpdate,
		} as ICredentialDataDecryptedObject;
		for (const key of toDelete) delete next[key];
		this.store[this.type] = next;
	}
}

function resolveCredentialValue(
	value: string,
	credentials: ICredentialDataDecryptedObject,
	workflow: Workflow,
	node: INode,
): string {
	if (!isExpression(value)) return value;
	const resolved = workflow.expression.getSimpleParameterValue(
		node,
		value,
		'internal',
		{ $credentials: credentials },
		undefined,
		'',
	);
	if (!resolved) return '';
	return String(resolved);
}

/** Defaults of the credential's properties (as packages/cli applyDefaultsAndOverwrites), then `={{...}}` values resolved. */
export function applyCredentialDefaults(
	credentialType: ICredentialType | undefined,
	data: ICredentialDataDecryptedObject,
	mode: WorkflowExecuteMode,
	workflow?: Workflow,
): ICredentialDataDecryptedObject {
	let result: ICredentialDataDecryptedObject = { ...data };
	if (credentialType) {
		const withDefaults = NodeHelpers.getNodeParameters(
			credentialType.properties,
			result as INodeParameters,
			true,
			false,
			null,
			null,
		);
		// Keep keys the type does not declare (getNodeParameters drops them).
		result = { ...result, ...(withDefaults as ICredentialDataDecryptedObject) };
	}
	const hasExpression = Object.values(result).some((v) => isExpression(v));
	if (hasExpression && workflow) {
		const mockNode: INode = {
			id: 'credential-resolver',
			name: '',
			type: 'mock',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		};
		result = workflow.expression.getComplexParameterValue(
			mockNode,
			result as INodeParameters,
			mode,
			{},
			undefined,
			undefined,
			result,
		) as ICredentialDataDecryptedObject;
	}
	return result;
}
