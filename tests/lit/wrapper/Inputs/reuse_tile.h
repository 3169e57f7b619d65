// The header ptx-reuse-edits.test edits between two candidates.
#pragma once
#define REUSE_TILE 4
