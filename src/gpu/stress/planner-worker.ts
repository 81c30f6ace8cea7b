// The page's GPU stress planner: a stress run's allocator and planning in their own thread (planner-api.ts).
/// <reference lib="webworker" />
import { expose } from 'comlink';
import { plannerApi } from './planner-api';

expose(plannerApi());
