// The post API's start-up lines about the publishing rule and the slugs, as the executable logs
// them (built CLI, real SQLite file with drafts, scheduled posts and a legacy slug).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { test } from 'node:test'
import { assertBuilt } from '../helpers/built.js'
import { CLI } from '../helpers/cli.js'
import { sqliteServer } from '../helpers/databases.js'
import { createTable } from './publishing-fixture.js'
import { ROWS } from './publishing-suite.js'

/** The JSON log lines `posts-api` writes until it listens; then it is stopped. */
async function startupLines (filename: string, env: NodeJS.ProcessEnv): Promise<Array<{ level: number, msg: string }>> {
  assertBuilt()
  const child = spawn(process.execPath, [CLI, 'posts-api', '--posts-port', '0'], {
    env: { PATH: process.env.PATH, DATABASE_URL: filename, METRICS: 'off', ...env }
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not listening after 10 s: ${output}`)), 10_000)
      child.on('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)))
      child.stdout.on('data', () => {
        if (output.includes('post API listening at')) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
  } finally {
    child.removeAllListeners('exit')
    child.kill('SIGTERM')
    await once(child, 'exit')
  }
  return output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number, msg: string })
}

test('posts-api says once at start-up what PUBLISHED_ONLY would hide, or that it hides, and counts the slugs the front refuses', async () => {
  const database = await sqliteServer.create()
  try {
    await createTable(database, ROWS)
    const filename = database.location.dialect === 'sqlite' ? database.location.filename : ''
    const off = await startupLines(filename, {})
    const rule = off.filter((line) => /PUBLISHED_ONLY/.test(line.msg))
    assert.equal(rule.length, 1, JSON.stringify(off))
    assert.equal(rule[0]?.level, 40)
    // The executable runs on the real clock, long past the fixture's scheduled instant: 5 rows hidden (draft, unpublished, in review, deleted, undated).
    assert.match(rule[0]?.msg ?? '', /PUBLISHED_ONLY=true would hide 5 rows by published_at, draft, published, status, deleted_at/)
    assert.equal(off.filter((line) => /SLUG_PATTERN/.test(line.msg) && line.level === 40).length, 1)
    const on = await startupLines(filename, { PUBLISHED_ONLY: 'true' })
    const named = on.filter((line) => /PUBLISHED_ONLY/.test(line.msg))
    assert.equal(named.length, 1)
    assert.match(named[0]?.msg ?? '', /deciding columns published_at, draft, published, status, deleted_at; 5 rows hidden now/)
  } finally {
    await database.drop()
  }
})
