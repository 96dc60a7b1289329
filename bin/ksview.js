#!/usr/bin/env node
// Entry point of the `ksview` command: runs the compiled CLI (npm run build writes dist/).
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv);
