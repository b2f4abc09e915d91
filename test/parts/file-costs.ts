// What each slow test file costs, in seconds of `npm test` on the 2-core machine with three
// parts at once (the durations the spec reporter prints beside each file's path): as a newcomer
// runs it (SQLite, no outside service; a suite whose server is missing is skipped at once), and
// with every server, as CI runs it. The parts share the files out by these, so that they end
// together; a file not named here counts as TYPICAL_COST. Measure again when a file is added or
// grows slow, and name the files above 2.5 s in either run.
export const FILE_COSTS: Readonly<Record<string, readonly [newcomer: number, everyServer: number]>> = {
  'test/browser.test.ts': [0.1, 20.3],
  'test/client/package.test.ts': [8.2, 11.1],
  'test/edge/request-fuzz.test.ts': [5.5, 10.1],
  'test/feeds/sitemap.test.ts': [3.1, 4.0],
  'test/fleet/shared-versions.test.ts': [2.1, 5.3],
  'test/fleet/upstreams.test.ts': [21.7, 28.1],
  'test/fleet/workers.test.ts': [13.1, 11.8],
  'test/front/cache/page-index.test.ts': [7.8, 9.1],
  'test/front/client-misbehaviour.test.ts': [2.7, 2.1],
  'test/front/fast-lane.test.ts': [5.6, 2.9],
  'test/front/fault-under-load.test.ts': [13.2, 11.7],
  'test/front/path-fuzz.test.ts': [14.2, 12.6],
  'test/front/query-fuzz.test.ts': [4.0, 3.5],
  'test/import/postgres.test.ts': [0.1, 2.5],
  'test/ops/admin.test.ts': [4.6, 6.3],
  'test/ops/cluster-metrics.test.ts': [2.5, 2.6],
  'test/posts-api/changes-race.test.ts': [0.4, 2.9],
  'test/posts-api/list-queries.test.ts': [2.2, 3.8],
  'test/posts-api/whole-list-sync.test.ts': [0.4, 3.1],
  'test/process/cli.test.ts': [5.3, 4.0],
  'test/process/demo-fleet.test.ts': [0.1, 14.5],
  'test/process/npm-scripts.test.ts': [3.5, 2.0],
  'test/process/shutdown.test.ts': [3.6, 6.2],
  'test/process/start-modules.test.ts': [3.7, 3.9],
  'test/publishing/mysql.test.ts': [0.1, 5.6],
  'test/publishing/postgres.test.ts': [0.1, 12.7],
  'test/publishing/sqlite.test.ts': [2.9, 4.9],
  'test/render/large-documents.test.ts': [6.0, 13.3],
  'test/render/markdown-renderer.test.ts': [1.1, 2.5],
  'test/search/search-fuzz.test.ts': [1.9, 3.2],
  'test/search/search-http.test.ts': [0.6, 5.4],
  'test/search/search-reference.test.ts': [0.5, 4.3],
  'test/store/cursor-fuzz.test.ts': [2.7, 6.9],
  'test/store/list-query-model.test.ts': [7.9, 42.1],
  'test/store/mysql.test.ts': [0.1, 11.1],
  'test/store/neighbours-model.test.ts': [1.3, 12.4],
  'test/store/pgbouncer.test.ts': [0.1, 37.7],
  'test/store/postgres-private-server.test.ts': [0.1, 3.3],
  'test/store/postgres.test.ts': [0.1, 25.8],
  'test/store/sqlite.test.ts': [8.2, 8.8],
  'test/store/walks-model.test.ts': [2.3, 8.1],
  'test/sync/change-stream.test.ts': [2.3, 7.7],
  'test/sync/changes-model.test.ts': [2.3, 4.9],
  'test/sync/event-stream.test.ts': [2.8, 3.3],
  'test/sync/front-subscribers.test.ts': [5.5, 5.1]
}

/** What a file not in FILE_COSTS counts as: about the mean of the others (0.48 s in the newcomer's run). */
export const TYPICAL_COST = 0.5

/** Whether this run has its servers (CI, or a database named): which of the two costs applies. */
export const COST_COLUMN = process.env.CI === 'true' || process.env.TEST_POSTGRES_URL !== undefined || process.env.TEST_MYSQL_URL !== undefined ? 1 : 0
