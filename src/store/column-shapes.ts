// What each column of `posts` can hold, read from the database for the import's writes: the
// family of its type, its length limit, its allowed labels, and whether it may be NULL or left
// out of an INSERT. The import converts each value to what its column needs with this, and
// refuses a value the column cannot hold before anything is written, in a dry run alike.
import { sql, type Kysely } from 'kysely'
import type { Dialect } from './store.js'

export type ColumnFamily = 'text' | 'json' | 'boolean' | 'integer' | 'number' | 'timestamp' | 'array' | 'other'

export interface ColumnShape {
  name: string
  /** The declared type as the database writes it, for messages (`text[]`, `varchar(20)`). */
  type: string
  family: ColumnFamily
  /** A PostgreSQL array's element family. */
  element?: ColumnFamily
  /** Characters (or bytes, where `lengthInBytes`) a text column holds at most. */
  maxLength?: number
  lengthInBytes?: boolean
  /** An integer column's range. */
  range?: readonly [bigint, bigint]
  /** An enum's labels, and whether they match in any case (MySQL's do, PostgreSQL's do not). */
  labels?: readonly string[]
  labelsIgnoreCase?: boolean
  notNull: boolean
  /** Whether an INSERT may leave it out (a default, an identity, generated, or nullable). */
  optional: boolean
}

const INTEGER_RANGES: Record<string, readonly [bigint, bigint]> = {
  int2: [-(2n ** 15n), 2n ** 15n - 1n],
  int4: [-(2n ** 31n), 2n ** 31n - 1n],
  int8: [-(2n ** 63n), 2n ** 63n - 1n],
  tinyint: [-128n, 127n],
  smallint: [-(2n ** 15n), 2n ** 15n - 1n],
  mediumint: [-(2n ** 23n), 2n ** 23n - 1n],
  int: [-(2n ** 31n), 2n ** 31n - 1n],
  bigint: [-(2n ** 63n), 2n ** 63n - 1n]
}

/** The columns of `posts` by name. */
export async function describeColumnShapes (db: Kysely<any>, dialect: Dialect): Promise<Map<string, ColumnShape>> {
  const shapes = dialect === 'postgres' ? await postgresShapes(db) : dialect === 'mysql' ? await mysqlShapes(db) : await sqliteShapes(db)
  return new Map(shapes.map((shape) => [shape.name, shape]))
}

interface PostgresColumn {
  name: string
  type: string
  typname: string
  category: string
  element_typname: string | null
  element_category: string | null
  not_null: boolean
  has_default: boolean
  labels: string[] | null
}

async function postgresShapes (db: Kysely<any>): Promise<ColumnShape[]> {
  const { rows } = await sql<PostgresColumn>`
    SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, t.typname, t.typcategory AS category,
      e.typname AS element_typname, e.typcategory AS element_category, a.attnotnull AS not_null,
      (a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '') AS has_default,
      (SELECT array_agg(enumlabel::text ORDER BY enumsortorder) FROM pg_enum WHERE enumtypid = a.atttypid) AS labels
    FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'
    WHERE a.attrelid = to_regclass('posts') AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY a.attnum`.execute(db)
  return rows.map((row) => {
    const family = postgresFamily(row.typname, row.category)
    const length = /^character(?: varying)?\((\d+)\)$/.exec(row.type)?.[1]
    return {
      name: row.name,
      type: row.type,
      family,
      ...(family === 'array' && { element: postgresFamily(row.element_typname ?? '', row.element_category ?? '') }),
      ...(length !== undefined && { maxLength: Number(length) }),
      ...(INTEGER_RANGES[row.typname] !== undefined && { range: INTEGER_RANGES[row.typname] }),
      ...(row.labels !== null && { labels: row.labels }),
      notNull: row.not_null,
      optional: !row.not_null || row.has_default
    }
  })
}

function postgresFamily (typname: string, category: string): ColumnFamily {
  if (typname === 'json' || typname === 'jsonb') return 'json'
  if (typname in INTEGER_RANGES) return 'integer'
  switch (category) {
    case 'A': return 'array'
    case 'S': return 'text'
    case 'E': return 'text'
    case 'B': return 'boolean'
    case 'N': return 'number'
    case 'D': return typname === 'timestamp' || typname === 'timestamptz' || typname === 'date' ? 'timestamp' : 'other'
    default: return 'other'
  }
}

interface MysqlColumn {
  name: string
  data_type: string
  column_type: string
  max_length: number | string | null
  nullable: string
  column_default: string | null
  extra: string
}

const MYSQL_TEXT_BYTES: Record<string, number> = { tinytext: 255, text: 65_535, mediumtext: 16_777_215, longtext: 4_294_967_295 }
const JSON_VALID_CHECK = /json_valid\(`((?:[^`]|``)+)`\)/gi

async function mysqlShapes (db: Kysely<any>): Promise<ColumnShape[]> {
  const { rows } = await sql<MysqlColumn>`
    SELECT COLUMN_NAME AS name, DATA_TYPE AS data_type, COLUMN_TYPE AS column_type, CHARACTER_MAXIMUM_LENGTH AS max_length,
      IS_NULLABLE AS nullable, COLUMN_DEFAULT AS column_default, EXTRA AS extra
    FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts' ORDER BY ORDINAL_POSITION`.execute(db)
  if (rows.length === 0) return []
  // MariaDB's JSON is LONGTEXT with a json_valid() check, which only the table definition shows.
  const { rows: [definition] } = await sql<{ 'Create Table': string }>`SHOW CREATE TABLE posts`.execute(db)
  const jsonColumns = new Set([...(definition?.['Create Table'] ?? '').matchAll(JSON_VALID_CHECK)].map((m) => m[1]?.replaceAll('``', '`')))
  return rows.map((row) => {
    const dataType = row.data_type.toLowerCase()
    const columnType = row.column_type.toLowerCase()
    const unsigned = columnType.includes('unsigned')
    const signed = INTEGER_RANGES[dataType]
    const family: ColumnFamily = jsonColumns.has(row.name) || dataType === 'json'
      ? 'json'
      : signed !== undefined
        ? 'integer'
        : /^(char|varchar|tinytext|text|mediumtext|longtext|enum|set)$/.test(dataType)
          ? 'text'
          : /^(decimal|numeric|float|double|real)$/.test(dataType)
            ? 'number'
            : /^(datetime|timestamp|date)$/.test(dataType) ? 'timestamp' : 'other'
    const bytes = MYSQL_TEXT_BYTES[dataType]
    const labels = dataType === 'enum' ? [...columnType.matchAll(/'((?:[^']|'')*)'/g)].map((m) => (m[1] ?? '').replaceAll("''", "'")) : undefined
    return {
      name: row.name,
      type: columnType,
      family,
      ...(family === 'text' && bytes === undefined && row.max_length !== null && { maxLength: Number(row.max_length) }),
      ...(family === 'text' && bytes !== undefined && { maxLength: bytes, lengthInBytes: true }),
      ...(signed !== undefined && { range: unsigned ? [0n, signed[1] * 2n + 1n] as const : signed }),
      ...(labels !== undefined && { labels, labelsIgnoreCase: true }),
      notNull: row.nullable !== 'YES',
      optional: row.nullable === 'YES' || row.column_default !== null || /auto_increment|generated/i.test(row.extra)
    }
  })
}

interface SqliteColumn {
  name: string
  type: string
  /** Numbers or bigints, as the connection reads integers. */
  notnull: number | bigint
  dflt_value: string | null
  pk: number | bigint
}

/** SQLite holds any value in any column of an ordinary table; only NULL and JSON matter. */
async function sqliteShapes (db: Kysely<any>): Promise<ColumnShape[]> {
  const { rows } = await sql<SqliteColumn>`PRAGMA table_info(posts)`.execute(db)
  return rows.map((row) => {
    const notNull = Number(row.notnull) === 1
    return {
      name: row.name,
      type: row.type.toLowerCase(),
      family: /^json$/i.test(row.type.trim()) ? 'json' : 'other',
      notNull,
      // An INTEGER PRIMARY KEY is the rowid: it numbers itself.
      optional: !notNull || row.dflt_value !== null || (Number(row.pk) === 1 && /^integer$/i.test(row.type.trim()))
    }
  })
}
