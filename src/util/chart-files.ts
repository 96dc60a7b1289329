// The files of charts/kubestellar-view/files/: the RBAC (and the WEC executors) the chart renders
// into each cluster, which the local spaces and the tests read too, so each rule is written once.
import path from 'node:path';
import { repoRoot } from './repo-root.js';

/** The chart's folder of shipped files, relative to the repository root. */
export const CHART_FILES_DIR = path.join('charts', 'kubestellar-view', 'files');

/** Absolute path of one chart file, e.g. chartFile('agent/its-rbac.yaml'). */
export const chartFile = (rel: string): string => path.join(repoRoot(), CHART_FILES_DIR, rel);
