// MariaDB's boolean-mode string: only tokens and our operators, without the tokens InnoDB does not
// index; and the limits read from the server that decide which those are.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Kysely, MysqlDialect, sql } from 'kysely'
import { createPool } from 'mysql2'
import { booleanModeQuery, readMysqlSearchLimits, type MysqlSearchLimits } from '../../src/search/mysql-search.js'
import { parseSearchQuery } from '../../src/contract/search-query.js'
import { mysqlServer, type TestDatabase } from '../helpers/databases.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const LIMITS: MysqlSearchLimits = { minTokenSize: 3, maxTokenSize: 84, stopwords: new Set(['the', 'and']) }
const written = (q: string): string | undefined => booleanModeQuery(parseSearchQuery(q), LIMITS)

test('groups are required, alternatives optional within them, exclusions prohibited', () => {
  assert.equal(written('rust OR "async await" tokio -unsafe -"dead code"'), '+(rust "async await") +tokio -unsafe -"dead code"')
  assert.equal(written('node.js don\'t foo_bar'), '+"node js" +"don t" +foo_bar')
})

test('operator characters never reach the string; unindexed tokens are left out', () => {
  assert.equal(written('+a* ~(b) <c> @4 "d\'e" wörd*'), '+wörd')
  assert.equal(written('the cat'), '+cat')
  assert.equal(written('"sat on the mat"'), '+"sat on the mat"')
  assert.equal(written(`cat ${'x'.repeat(85)}`), '+cat')
  assert.equal(written('the OR cat -and'), '+cat')
  // Nothing wanted left: nothing matches (a query of exclusions only would match nothing anyway).
  assert.equal(written('the -cat'), undefined)
  assert.equal(written('"on the" OR js'), undefined)
})

describeOrSkip('the limits read from the server', { skip: mysqlServer.skip }, () => {
  let database: TestDatabase
  let db: Kysely<any>
  before(async () => {
    database = await mysqlServer.create()
    db = new Kysely({ dialect: new MysqlDialect({ pool: createPool({ uri: (database.location as { url: string }).url, connectionLimit: 1 }) }) })
  })
  after(async () => {
    await db?.destroy()
    await database?.drop()
  })

  test('InnoDB\'s default stop words and token sizes, a stop word table of the operator\'s, or none', async () => {
    const defaults = await readMysqlSearchLimits(db)
    assert.equal(defaults.minTokenSize, 3)
    assert.equal(defaults.maxTokenSize, 84)
    assert.ok(defaults.stopwords.has('the') && defaults.stopwords.has('about'))
    await sql`CREATE TABLE stop_words (value VARCHAR(30)) ENGINE = InnoDB`.execute(db)
    await sql`INSERT INTO stop_words VALUES ('Quokka'), ('kettle')`.execute(db)
    await sql.raw(`SET SESSION innodb_ft_user_stopword_table = '${database.name}/stop_words'`).execute(db)
    assert.deepEqual([...(await readMysqlSearchLimits(db)).stopwords].sort(), ['kettle', 'quokka'])
    await sql`SET SESSION innodb_ft_enable_stopword = OFF`.execute(db)
    assert.equal((await readMysqlSearchLimits(db)).stopwords.size, 0)
  })
})
