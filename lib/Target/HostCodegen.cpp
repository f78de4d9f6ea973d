//===- HostCodegen.cpp - LLVM-dialect module to a native object -----------===//

#include "grove/Target/HostCodegen.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/SystemLibraries.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::grove;

static llvm::CodeGenOptLevel toCodeGenLevel(unsigned level) {
  switch (level) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

bool mlir::grove::isKnownProcessor(const llvm::Target &target,
                                   const llvm::Triple &triple,
                                   llvm::StringRef cpu) {
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target.createMCSubtargetInfo(triple, "", ""));
  return sti && sti->isCPUStringValid(cpu);
}

std::unique_ptr<llvm::TargetMachine>
mlir::grove::createHostTargetMachine(const HostCodegenOptions &options,
                                     std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;

  std::string cpu = options.cpu, features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
      f.AddFeature(name, enabled);
    features = f.getString();
  } else if (cpu.empty()) {
    // A baseline every machine of the architecture runs; BLAS dispatches
    // on the CPU at run time, so GEMM speed does not depend on this.
    cpu = triple.isX86() ? "x86-64" : "generic";
  }
  if (!isKnownProcessor(*target, triple, cpu)) {
    error = "unknown CPU '" + cpu + "' for " + triple.str();
    return nullptr;
  }
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      toCodeGenLevel(options.optLevel)));
  if (!tm)
    error = "cannot create a target machine for " + triple.str();
  return tm;
}

/// LLVM's default pipeline at `optLevel` (what MLIR's
/// makeOptimizingTransformer runs), plus glibc's vector math library where
/// the target has AVX2: the loop vectorizer then calls libmvec's
/// `_ZGV*_expf` & co. instead of scalarising every exp, tanh and log (a
/// softmax or sigmoid loop). libmvec comes with libm: `-lm` links it.
static void optimize(llvm::Module &module, llvm::TargetMachine &tm,
                     unsigned optLevel) {
  llvm::OptimizationLevel level = optLevel == 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = tuning.LoopInterleaving = optLevel > 0;
  tuning.LoopVectorization = tuning.SLPVectorization = optLevel > 0;
  llvm::PassBuilder builder(&tm, tuning);

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // Registered first, so the builder's default registration is skipped.
  llvm::TargetLibraryInfoImpl libraryInfo(tm.getTargetTriple());
  const llvm::MCSubtargetInfo *subtarget = tm.getMCSubtargetInfo();
  if (tm.getTargetTriple().isX86() && tm.getTargetTriple().isOSLinux() &&
      subtarget && subtarget->checkFeatures("+avx2"))
    libraryInfo.addVectorizableFunctionsFromVecLib(llvm::VectorLibrary::LIBMVEC,
                                                   tm.getTargetTriple());
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(libraryInfo); });
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes =
      optLevel == 0 ? builder.buildO0DefaultPipeline(level)
                    : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);
}

std::unique_ptr<llvm::Module>
mlir::grove::translateAndOptimize(ModuleOp module, llvm::LLVMContext &ctx,
                                  llvm::TargetMachine &tm, unsigned optLevel) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, ctx, "grove");
  if (!llvmModule) {
    module.emitError("failed to translate the module to LLVM IR");
    return nullptr;
  }
  llvmModule->setDataLayout(tm.createDataLayout());
  llvmModule->setTargetTriple(tm.getTargetTriple());
  optimize(*llvmModule, tm, optLevel);
  return llvmModule;
}

LogicalResult mlir::grove::emitObject(llvm::Module &module,
                                      llvm::TargetMachine &tm,
                                      llvm::SmallVectorImpl<char> &object,
                                      std::string &error) {
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  codegen.run(module);
  return success();
}

FailureOr<std::string>
mlir::grove::buildStaticLibrary(llvm::StringRef memberName,
                                llvm::StringRef object, std::string &error) {
  llvm::NewArchiveMember member(llvm::MemoryBufferRef(object, memberName));
  member.MemberName = memberName;
  std::vector<llvm::NewArchiveMember> members;
  members.push_back(std::move(member));
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> archive =
      llvm::writeArchiveToBuffer(members, llvm::SymtabWritingMode::NormalSymtab,
                                 llvm::object::Archive::K_GNU,
                                 /*Deterministic=*/true, /*Thin=*/false);
  if (!archive) {
    error = llvm::toString(archive.takeError());
    return failure();
  }
  return (*archive)->getBuffer().str();
}
