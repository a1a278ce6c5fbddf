// Runs in every end-to-end test file: jest's sandboxed `process` never sees 'exit', so the harness's own clean-up
// (kill what it started, remove packed tarballs and user folders) is called here once the file is done.
import { disposeAll } from '../../../tools/n8n/n8n';

afterAll(() => disposeAll());
