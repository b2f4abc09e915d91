// The committed client types (packages/client/src/schema.ts) are those of the front's document as it is.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { CLIENT_TYPES_FILE, clientTypes, frontDocument } from '../../scripts/client-types.js'
import { freePort } from '../helpers/fake-upstream.js'
import { buildTestFront } from '../helpers/tiers.js'

test('packages/client/src/schema.ts is up to date with the front\'s OpenAPI document (else: npm run client:types)', async () => {
  const front = buildTestFront(new URL(`http://127.0.0.1:${await freePort()}`))
  try {
    const served = (await front.inject('/openapi.json')).json()
    // The script's document is the one a running front serves.
    assert.deepEqual(await frontDocument(), served)
    assert.equal(readFileSync(CLIENT_TYPES_FILE, 'utf8'), await clientTypes(served), 'run `npm run client:types` and commit packages/client/src/schema.ts')
  } finally {
    await front.close()
  }
})
