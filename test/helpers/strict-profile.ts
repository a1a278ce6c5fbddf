/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never ships */
// Setup file of the jest project unit-strict: every simulator a test starts takes the strict profile unless the
// test chooses one itself.
process.env.SIM_PROFILE = 'strict';
