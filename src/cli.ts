#!/usr/bin/env node
// The `blog-read-api` executable. Node's compile cache goes on first: the modules a command loads
// (several hundred files for `serve`: Fastify, undici, Kysely…) are then compiled from the code
// V8 kept on disk at an earlier start (under os.tmpdir(); NODE_DISABLE_COMPILE_CACHE=1 turns it
// off), which takes about a tenth off every start but the first. It must be on before they load:
// hence the dynamic import. Not under coverage (NODE_V8_COVERAGE), which cached code makes less
// precise.
import { enableCompileCache } from 'node:module'

if (process.env.NODE_V8_COVERAGE === undefined) enableCompileCache()
await import('./cli/process-cli.js')
