// Plain words for every term the page's figures use: shown on hover (a term's title) and listed
// under the stats ("What these mean"), so that no figure needs the allocator's source to be read.

export const GLOSSARY = {
  request: 'One allocation or free the program made, in order; requests are numbered from 0, as `splitscope replay --until` and its JSON number them.',
  allocated: 'Bytes in blocks that hold a live tensor (torch.cuda.memory_allocated()).',
  reserved: 'Bytes PyTorch has taken from CUDA with cudaMalloc (or mapped, under expandable segments): allocated plus its cache (torch.cuda.memory_reserved(); nvidia-smi counts it all as used).',
  active: 'Allocated bytes plus blocks freed by the program but still in use on another stream (record_stream), which cannot be reused yet.',
  'inactive split': 'Cached free bytes inside segments that also hold live blocks: the pieces left when a big block was split for a smaller request. Only requests that fit a piece can use them.',
  'allocated, peak': 'The most memory allocated to tensors at any moment so far (since a reset_peak_memory_stats()).',
  'reserved, peak': 'The most memory reserved from CUDA at any moment so far: what the job needs from the card.',
  'reserved − allocated': 'PyTorch\'s cache: reserved but holding no tensor. nvidia-smi counts it as used; PyTorch reuses it only for requests that fit a cached block.',
  'largest free block': 'The largest request that needs no new cudaMalloc: the biggest cached free block.',
  'external fragmentation': 'How scattered the cache is: 1 − largest free block ÷ cached free bytes. Near 100%, the cache is many small pieces, and a large request needs a new segment even with plenty cached.',
  'cudaMalloc calls': 'Segments PyTorch took from CUDA (num_device_alloc; page maps under expandable segments). Each one is slow and synchronizes the device.',
  'cudaFree calls': 'Segments PyTorch gave back to CUDA (num_device_free; page unmaps under expandable segments), when the cache was released.',
  'retries (cache flushed)': 'Times a cudaMalloc failed and PyTorch freed every cached segment and tried again (num_alloc_retries): the sign of memory near the cap.',
  OOMs: 'Requests that failed with "CUDA out of memory" (num_ooms). PyTorch raises at the first; a replay counts the ones after it as if the program caught each error and went on.',
  segment: 'A range of memory PyTorch got from one cudaMalloc (or mapped pages of an expandable segment); blocks are carved out of it.',
  'addresses as recorded': 'Segments sit where the recording put them: the config makes the recorded decisions, so the replay is event for event the recording.',
  'addresses simulated': 'Segments are placed by a model of the CUDA driver, since under another config the recording\'s addresses no longer apply; addresses only break ties, so figures stay close to a real run.',
  stream: 'A CUDA stream; PyTorch keeps a separate cache per stream. Streams are numbered as the recording names them (PyTorch writes a stream\'s handle, a large number, for any but the default stream 0).',
  cap: 'A memory cap: torch.cuda.set_per_process_memory_fraction (or per_process_memory_fraction in the config), or the one a recorded OOM shows. PyTorch fails a cudaMalloc that would reserve past it.',
} as const;

export type Term = keyof typeof GLOSSARY;
