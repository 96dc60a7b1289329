// Where src/cli/serve.ts imports the placement controller from; it now lives in ./placement/
// (controller.ts is its public face). Delete this file once serve.ts imports
// './placement/controller.js'.
export { CLEANUP_FINALIZER, PlacementController, SOURCE_ANNOTATION, type PlacementOptions } from './placement/controller.js';
