// Complete settings for tests: the settings table's defaults (as a user who sets nothing gets
// them), logs silent, no load shedding, and the overrides a test names, in the same spelling as
// the environment.
import { loadConfig, type Config, type SettingName } from '../../src/config.js'

/**
 * Load shedding, unless a test sets it: never, in the tiers a test builds and in the processes it
 * starts. On a slow machine under a whole run (lint, the type check and three test parts on two
 * cores), a process can go without the CPU for over a second: past the 1 s default, an in-process
 * post API answered a test's first requests 503 `overloaded`, and post APIs started by the fleet's
 * tests shed answers their tests counted as failures. Shedding has tests of its own, which set it.
 */
export const NO_LOAD_SHEDDING = { LOAD_SHED_DELAY_MS: '0' }

export function testConfig (overrides: Partial<Record<SettingName, string>> = {}): Config {
  return loadConfig({}, { LOG_LEVEL: 'silent', ...NO_LOAD_SHEDDING, ...overrides })
}
