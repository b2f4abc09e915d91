// Which tables `posts` reads, as SQLite itself resolves it: the table itself, or every table a
// view reads (through other views, joins and subqueries). A query's bytecode (EXPLAIN) opens a
// cursor on each b-tree it reads, by root page; the schema names the table of each root page (an
// index's, its table). Parsing the view's SQL would miss what the planner resolves (nested views,
// CTEs), and a table the planner leaves out (an unused LEFT JOIN on a unique key) is one the
// view's rows do not depend on.
import type Database from 'better-sqlite3'

/** The ordinary tables `posts` reads (sorted), or why triggers on them could not see every change. */
export type TablesRead = { tables: string[] } | { refused: string }

const OPENS_BTREE = new Set(['OpenRead', 'ReopenIdx'])

/** A step of the program; its operands as the connection reads integers (BigInt on the store's). */
interface Instruction { opcode: string, p2: number | bigint, p3: number | bigint }

export function tablesReadByPosts (database: Database.Database): TablesRead {
  let program: Instruction[]
  try {
    // EXPLAIN lists a program compiled from the schema this connection holds, and runs nothing that
    // would find it stale: a statement that runs (and reads the schema) loads another connection's
    // changes first.
    database.prepare('SELECT count(*) FROM sqlite_schema').get()
    program = database.prepare('EXPLAIN SELECT * FROM posts').all() as Instruction[]
  } catch (err) {
    // No `posts`, or a view over something gone: the reads fail too.
    return { refused: `posts cannot be read (${(err as Error).message})` }
  }
  if (program.some((step) => OPENS_BTREE.has(step.opcode) && Number(step.p3) !== 0)) return { refused: 'it reads a table of another database' }
  const pages = [...new Set(program.filter((step) => OPENS_BTREE.has(step.opcode)).map((step) => Number(step.p2)))]
  const named = database.prepare(`SELECT rootpage, tbl_name FROM sqlite_schema WHERE rootpage IN (${pages.map(() => '?').join(', ')})`)
    .all(...pages) as Array<{ rootpage: number, tbl_name: string }>
  const tables = [...new Set(named.map((entry) => entry.tbl_name))].sort()
  const system = tables.find((name) => name.startsWith('sqlite_'))
  if (named.length < pages.length || system !== undefined) return { refused: `it reads SQLite's own table ${system ?? 'sqlite_schema'}, on which no trigger can be put` }
  if (program.some((step) => step.opcode === 'VOpen')) {
    // Which virtual table a cursor opens, the bytecode does not say. Those the schema holds (FTS5
    // and the like) keep rows no trigger sees; without any, it is a table-valued function such as
    // json_each, which reads only its arguments.
    const stored = database.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name").pluck().all() as string[]
    if (stored.length > 0) return { refused: `it reads a virtual table (the database has ${stored.join(', ')}), on which no trigger can be put` }
  }
  return { tables }
}
