// Complete settings for tests: the settings table's defaults (as a user who sets nothing gets
// them), logs silent, and the overrides a test names, in the same spelling as the environment.
import { loadConfig, type Config, type SettingName } from '../../src/config.js'

export function testConfig (overrides: Partial<Record<SettingName, string>> = {}): Config {
  return loadConfig({}, { LOG_LEVEL: 'silent', ...overrides })
}
