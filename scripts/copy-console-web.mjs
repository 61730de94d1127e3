#!/usr/bin/env node
// Copies the console's static front end (src/console/web: HTML, JS, CSS; no build step of its
// own) next to the compiled console server (dist/console/web), which serves it from there.
import { cpSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
cpSync(join(root, 'src', 'console', 'web'), join(root, 'dist', 'console', 'web'), { recursive: true });
