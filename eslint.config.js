// ESLint with neostandard, the Fastify family's style (no semicolons, 2 spaces, single quotes).
import neostandard from 'neostandard'

export default neostandard({
  ts: true,
  ignores: ['dist/**', 'packages/*/dist/**', 'coverage/**', 'bench/results/**', 'test-results/**', 'packages/client/src/schema.ts']
})
