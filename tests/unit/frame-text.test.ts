import { expect, test } from 'vitest';
import { shortFrame } from '../../src/views/frame-text';

test('a frame label keeps its function and the file from its package on', () => {
  expect(shortFrame('forward /opt/venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:282')).toBe('forward  transformers/models/gpt2/modeling_gpt2.py:282');
  expect(shortFrame('<module> /home/me/work/jobs/train.py:12')).toBe('<module>  work/jobs/train.py:12');
  expect(shortFrame('run x.py:1')).toBe('run  x.py:1');
  expect(shortFrame('(no stack recorded)')).toBe('(no stack recorded)');
});
