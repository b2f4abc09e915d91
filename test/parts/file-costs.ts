// What each slow test file costs, in seconds of `npm test` on the 2-core machine with three
// parts at once (the durations the spec reporter prints beside each file's path): as a newcomer
// runs it (SQLite, no outside service; a suite whose server is missing is skipped at once), and
// with every server, as CI runs it. The parts share the files out by these, so that they end
// together; a file not named here counts as TYPICAL_COST. Measure again when a file is added or
// grows slow, and name the files above 2.5 s in either run.
export const FILE_COSTS: Readonly<Record<string, readonly [newcomer: number, everyServer: number]>> = {
  'test/browser.test.ts': [0.1, 20.3],
  'test/client/package.test.ts': [10.1, 11.1],
  'test/edge/request-fuzz.test.ts': [6.5, 10.1],
  'test/feeds/sitemap.test.ts': [2.6, 4.0],
  'test/fleet/shared-versions.test.ts': [2.7, 5.3],
  'test/fleet/upstreams.test.ts': [24.7, 28.1],
  'test/fleet/workers.test.ts': [14.8, 11.8],
  'test/front/cache/page-index.test.ts': [7.1, 9.1],
  'test/front/client-misbehaviour.test.ts': [3.3, 2.1],
  'test/front/fast-lane.test.ts': [6.6, 2.9],
  'test/front/fault-under-load.test.ts': [14.2, 11.7],
  'test/front/path-fuzz.test.ts': [8.8, 12.6],
  'test/front/query-fuzz.test.ts': [4.0, 3.5],
  'test/import/postgres.test.ts': [0.1, 2.5],
  'test/ops/admin.test.ts': [7.5, 6.3],
  'test/ops/cluster-metrics.test.ts': [4.5, 2.6],
  'test/posts-api/changes-race.test.ts': [0.3, 2.9],
  'test/posts-api/list-queries.test.ts': [3.9, 3.8],
  'test/posts-api/whole-list-sync.test.ts': [0.8, 3.1],
  'test/process/cli.test.ts': [6.4, 4.0],
  'test/process/demo-fleet.test.ts': [0.1, 14.5],
  'test/process/npm-scripts.test.ts': [4.0, 2.0],
  'test/process/shutdown.test.ts': [5.7, 6.2],
  'test/process/start-modules.test.ts': [3.7, 3.9],
  'test/process/test-parts.test.ts': [2.5, 2.0],
  'test/publishing/mysql.test.ts': [0.1, 5.6],
  'test/publishing/postgres.test.ts': [0.1, 12.7],
  'test/publishing/sqlite.test.ts': [4.2, 4.9],
  'test/publishing/startup-log.test.ts': [2.5, 2.1],
  'test/render/large-documents.test.ts': [12.9, 13.3],
  'test/render/markdown-renderer.test.ts': [2.0, 2.5],
  'test/search/memory-search-index.test.ts': [2.8, 1.8],
  'test/search/search-fuzz.test.ts': [2.2, 3.2],
  'test/search/search-http.test.ts': [1.5, 5.4],
  'test/search/search-reference.test.ts': [1.1, 4.3],
  'test/store/cursor-fuzz.test.ts': [3.0, 6.9],
  'test/store/list-query-model.test.ts': [9.8, 42.1],
  'test/store/mysql.test.ts': [0.1, 11.1],
  'test/store/neighbours-model.test.ts': [1.4, 12.4],
  'test/store/pgbouncer.test.ts': [0.1, 37.7],
  'test/store/postgres-private-server.test.ts': [0.1, 3.3],
  'test/store/postgres.test.ts': [0.1, 25.8],
  'test/store/sqlite.test.ts': [10.5, 8.8],
  'test/store/walks-model.test.ts': [2.0, 8.1],
  'test/sync/change-stream.test.ts': [2.0, 7.7],
  'test/sync/changes-model.test.ts': [3.5, 4.9],
  'test/sync/event-stream.test.ts': [3.3, 3.3],
  'test/sync/front-subscribers.test.ts': [3.3, 5.1]
}

/** What a file not in FILE_COSTS counts as: about the mean of the others (0.45 s in a newcomer's run). */
export const TYPICAL_COST = 0.5

/** Whether this run has its servers (CI, or a database named): which of the two costs applies. */
export const COST_COLUMN = process.env.CI === 'true' || process.env.TEST_POSTGRES_URL !== undefined || process.env.TEST_MYSQL_URL !== undefined ? 1 : 0
