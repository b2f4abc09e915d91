#!/usr/bin/env node
// The `blog-read-api` executable. Node's compile cache goes on first: the modules a command loads
// (several hundred files for `serve`: Fastify, undici, Kysely…) are then compiled from the code
// V8 kept on disk at an earlier start (under os.tmpdir(); NODE_DISABLE_COMPILE_CACHE=1 turns it
// off), which takes about a tenth off every start but the first. It must be on before they load:
// hence the dynamic import. Not under coverage (NODE_V8_COVERAGE set and not empty), which
// cached code makes less precise. The default import and the optional call: Node 20 has no
// enableCompileCache, and a named import of it would fail to load this file there, before the
// store can say in one line which Node it needs.
import nodeModule from 'node:module'

if ((process.env.NODE_V8_COVERAGE ?? '') === '') nodeModule.enableCompileCache?.()
await import('./cli/process-cli.js')
