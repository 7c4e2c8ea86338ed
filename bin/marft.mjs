#!/usr/bin/env node
// Entry point of `npx marft`: registers tsx so the TypeScript sources run as they are (no build step),
// then hands over to the command dispatcher.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
