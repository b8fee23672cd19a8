// Recursive deletion (rm -rf without following symbolic links): the checkpoint store prunes
// with it, and every other caller uses it instead of std::filesystem::remove_all.
//
// Why not std::filesystem::remove_all: PyTorch's CUDA wheels (2.11, built with the manylinux
// toolchain) export their own copy of libstdc++'s filesystem code; the dynamic linker binds
// accel's calls to it (libtorch comes before libstdc++ in the lookup order), and its recursive
// remove_all jumped to address 0 in accel's CUDA workers the first time a checkpoint was pruned.
// nftw and remove come from the C library, which nothing interposes.
#ifndef ACCEL_COMMON_REMOVE_TREE_H_
#define ACCEL_COMMON_REMOVE_TREE_H_

#include <string>
#include <system_error>

namespace accel {

// Deletes `path` (a file, a link or a directory with everything under it; links are removed, not
// followed). A missing path is not an error, as with std::filesystem::remove_all. On failure `ec`
// holds the errno of the first entry that could not be removed (what follows may remain);
// otherwise it is cleared.
void RemoveTree(const std::string& path, std::error_code& ec);

}  // namespace accel

#endif  // ACCEL_COMMON_REMOVE_TREE_H_
