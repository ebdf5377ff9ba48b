/** Whether a `--db` value names a PostgreSQL database rather than a file (no imports: the CLI asks this on every start). */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}
