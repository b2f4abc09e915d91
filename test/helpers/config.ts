// Complete settings for tests: the settings table's defaults (as a user who sets nothing gets
// them), logs silent, no load shedding, and the overrides a test names, in the same spelling as
// the environment.
import { loadConfig, type Config, type SettingName } from '../../src/config.js'

/**
 * Load shedding, unless a test sets it: never. The tiers a test builds share their event loop
 * with the test runner, which stalls it while it loads the next test files; on a slow machine
 * under a whole run, a stall past the 1 s default made an in-process post API answer a test's
 * first requests 503 `overloaded`. Shedding has tests of its own, which set it.
 */
const NO_LOAD_SHEDDING = { LOAD_SHED_DELAY_MS: '0' }

export function testConfig (overrides: Partial<Record<SettingName, string>> = {}): Config {
  return loadConfig({}, { LOG_LEVEL: 'silent', ...NO_LOAD_SHEDDING, ...overrides })
}
