import { runPart } from './part.js'

runPart(import.meta.url)
