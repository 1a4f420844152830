#!/usr/bin/env node
// `sessionfs mcp` as the CLI runs it (serveMcp over stdio), with tool limits the command line does not set:
// bench/mcp-calls.mjs reads 1,000 files in one read_many_files call, as the official server does in one
// read_multiple_files call. Usage: node bench/_mcp-serve.mjs '<ServeOptions as JSON>'
import { serveMcp } from '../dist/src/cli/serve.js';

await serveMcp({ mounts: [], allow: [], readOnly: false, readBeforeWrite: false, quiet: true, ...JSON.parse(process.argv[2] ?? '{}') });
