// SPDX-License-Identifier: GPL-2.0
/*
 * Sable NPU: a platform driver bound by device tree ("sable,npu") and a PCI driver (sable_pci.c),
 * exposing the UAPI of kmd/include/uapi/sable_uapi.h on a misc character device /dev/sable-npuN
 * (docs/kmd.md).
 *
 * Probe maps the NPU's CSR window, the host-interface block and the device memory (the reserved
 * region of "memory-region"), identifies the NPU, lays the firmware's boot block, rings and
 * program table out in device memory (kmd/core), publishes the boot block's address in the
 * host-interface block and waits for the firmware to report READY. Every UAPI request is
 * implemented by kmd/core, the logic the host tests run against the real firmware; this file
 * only copies arguments between user space and the core, maps buffer objects, and calls the
 * core from the threaded interrupt handler and when a client closes its file.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/of_address.h>
#include <linux/platform_device.h>
#include <linux/reset.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "sable_npu.h"

/* How long a registration waits for the firmware's verdict (signature check and validation of
 * the whole stream): generous, it is interruptible and abandoned registrations clean up.
 */
#define SABLE_REGISTER_TIMEOUT_NS (10LL * NSEC_PER_SEC)
#define SABLE_BOOT_TIMEOUT_MS 5000
#define SABLE_HEALTH_PERIOD_MS 1000

static unsigned int watchdog_ms = 1000;
module_param(watchdog_ms, uint, 0444);
MODULE_PARM_DESC(watchdog_ms, "the firmware's job watchdog: no progress for this long aborts a job");

static unsigned int hang_timeout_ms = 10000;
module_param(hang_timeout_ms, uint, 0644);
MODULE_PARM_DESC(hang_timeout_ms,
		 "work pending and no ring moving for this long resets the device (0: never); above the longest job");

static bool auto_reset = true;
module_param(auto_reset, bool, 0644);
MODULE_PARM_DESC(auto_reset, "reset a lost or hung device (else it stays lost until a debugfs reset)");

static DEFINE_IDA(sable_ida);

/* Sections that use a device's windows or memory (sable_npu.h); an unplug waits for them. */
DEFINE_SRCU(sable_srcu);

static void sable_npu_free(struct kref *ref)
{
	struct sable_npu *npu = container_of(ref, struct sable_npu, ref);

	kvfree(npu->core);
	put_device(npu->dev);
	kfree(npu);
}

static void sable_npu_get(struct sable_npu *npu)
{
	kref_get(&npu->ref);
}

static void sable_npu_put(struct sable_npu *npu)
{
	kref_put(&npu->ref, sable_npu_free);
}

static void sable_npu_put_action(void *data)
{
	sable_npu_put(data);
}

struct sable_npu *sable_npu_alloc(struct device *dev)
{
	struct sable_npu *npu;

	npu = kzalloc(sizeof(*npu), GFP_KERNEL);
	if (!npu)
		return NULL;
	kref_init(&npu->ref);
	mutex_init(&npu->files_lock);
	INIT_LIST_HEAD(&npu->clients);
	INIT_LIST_HEAD(&npu->dmabufs);
	npu->dev = get_device(dev);
	/* The bound driver's reference, dropped last at unbind (the first devm action). */
	if (devm_add_action_or_reset(dev, sable_npu_put_action, npu))
		return NULL;
	return npu;
}

/* One open file of the device node: a client of the UAPI; its address is the core's owner. */
struct sable_client {
	struct sable_npu *npu;  /* a reference, until the file's release */
	struct file *file;
	struct list_head node;  /* in npu->clients, under npu->files_lock */
	bool handshaken; /* READ_ONCE/WRITE_ONCE: ioctls of one file may run concurrently */
};

static u64 sable_owner(struct sable_client *client)
{
	return (u64)(uintptr_t)client;
}

static int sable_open(struct inode *inode, struct file *file)
{
	struct sable_npu *npu = container_of(file->private_data, struct sable_npu, misc);
	struct sable_client *client;

	/* misc_open calls this under the lock that misc_deregister takes: the device is bound. */
	client = kzalloc(sizeof(*client), GFP_KERNEL);
	if (!client)
		return -ENOMEM;
	sable_npu_get(npu);
	client->npu = npu;
	client->file = file;
	mutex_lock(&npu->files_lock);
	list_add(&client->node, &npu->clients);
	mutex_unlock(&npu->files_lock);
	file->private_data = client;
	atomic64_inc(&npu->stats.opens);
	return 0;
}

/* The last reference to the file is gone (every mapping too): reclaim what the client left
 * (on an unplugged device, in kmd/core's tables only).
 */
static int sable_release(struct inode *inode, struct file *file)
{
	struct sable_client *client = file->private_data;
	struct sable_npu *npu = client->npu;

	mutex_lock(&npu->files_lock);
	list_del(&client->node);
	mutex_unlock(&npu->files_lock);
	sable_core_client_close(npu->core, sable_owner(client));
	kfree(client);
	sable_npu_put(npu);
	return 0;
}

static long sable_ioctl_handshake(struct sable_client *client, void __user *uarg)
{
	struct sable_npu *npu = client->npu;
	struct sable_uapi_handshake arg;
	struct sable_core_device_ids ids;
	u32 state;
	int err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	ids = npu->ids; /* a copy: concurrent ioctls never write the device's */
	sable_core_firmware_status(npu->core, &state, &ids.firmware_version);
	err = sable_core_handshake(&ids, &arg);
	/* Copied back on refusal too: the message says what to rebuild. */
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		return -EFAULT;
	if (err) {
		atomic64_inc(&npu->stats.handshakes_refused);
		dev_dbg(npu->dev, "handshake refused: %s\n", arg.message);
		return err;
	}
	atomic64_inc(&npu->stats.handshakes);
	WRITE_ONCE(client->handshaken, true);
	return 0;
}

static long sable_ioctl_get_info(struct sable_client *client, void __user *uarg)
{
	struct sable_npu *npu = client->npu;
	struct sable_uapi_device_info info;
	struct sable_core_device_ids ids;
	u32 state;

	memset(&info, 0, sizeof(info));
	ids = npu->ids; /* a copy: concurrent ioctls never write the device's */
	sable_core_firmware_status(npu->core, &state, &ids.firmware_version);
	sable_core_device_info(&ids, &info);
	strscpy(info.device_name, npu->name, sizeof(info.device_name));
	strscpy(info.backend, npu->backend, sizeof(info.backend));
	sable_core_memory_info(npu->core, &info.device_memory_bytes, &info.device_memory_free);
	if (copy_to_user(uarg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static long sable_ioctl_bo_create(struct sable_client *client, void __user *uarg)
{
	struct sable_uapi_bo_create arg;
	int err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	err = sable_core_bo_create(client->npu->core, sable_owner(client), &arg);
	if (err)
		return err;
	if (copy_to_user(uarg, &arg, sizeof(arg))) {
		/* The caller never learns the handle: do not leave the object behind. */
		sable_core_bo_free(client->npu->core, sable_owner(client), arg.handle);
		return -EFAULT;
	}
	return 0;
}

static long sable_ioctl_bo_free(struct sable_client *client, void __user *uarg)
{
	struct sable_uapi_bo_free arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.pad != 0)
		return -EINVAL;
	return sable_core_bo_free(client->npu->core, sable_owner(client), arg.handle);
}

static long sable_ioctl_program_register(struct sable_client *client, void __user *uarg)
{
	struct sable_uapi_program_register *arg;
	struct sable_uapi_region_binding *bindings;
	long err;

	/* ~1 KiB of argument and bindings: off the kernel stack. */
	arg = kmalloc(sizeof(*arg), GFP_KERNEL);
	bindings = kcalloc(SABLE_UAPI_MAX_REGIONS, sizeof(*bindings), GFP_KERNEL);
	if (!arg || !bindings) {
		err = -ENOMEM;
		goto out;
	}
	if (copy_from_user(arg, uarg, sizeof(*arg))) {
		err = -EFAULT;
		goto out;
	}
	if (arg->region_count > SABLE_UAPI_MAX_REGIONS) {
		err = -EINVAL;
		goto out;
	}
	if (copy_from_user(bindings, u64_to_user_ptr(arg->regions),
			   arg->region_count * sizeof(*bindings))) {
		err = -EFAULT;
		goto out;
	}
	err = sable_core_program_register(client->npu->core, sable_owner(client), arg, bindings,
					  SABLE_REGISTER_TIMEOUT_NS);
	/* On -ENOEXEC the cause and command go back too. */
	if ((err == 0 || err == -ENOEXEC) && copy_to_user(uarg, arg, sizeof(*arg))) {
		if (err == 0)
			sable_core_program_release(client->npu->core, sable_owner(client),
						   arg->program);
		err = -EFAULT;
	}
out:
	kfree(bindings);
	kfree(arg);
	return err;
}

static long sable_ioctl_program_release(struct sable_client *client, void __user *uarg)
{
	struct sable_uapi_program_release arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.pad != 0)
		return -EINVAL;
	/* As sable-simd: an idle program is gone, its constant buffers free, when this returns. */
	return sable_core_program_release_wait(client->npu->core, sable_owner(client), arg.program,
					       SABLE_REGISTER_TIMEOUT_NS);
}

static long sable_ioctl_job_submit(struct sable_client *client, void __user *uarg)
{
	struct sable_uapi_job_buffer *buffers;
	struct sable_uapi_job_submit arg;
	u32 bad_entry;
	long err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.buffer_count > SABLE_UAPI_MAX_REGIONS)
		return -EINVAL;
	buffers = kcalloc(SABLE_UAPI_MAX_REGIONS, sizeof(*buffers), GFP_KERNEL);
	if (!buffers)
		return -ENOMEM;
	if (copy_from_user(buffers, u64_to_user_ptr(arg.buffers),
			   arg.buffer_count * sizeof(*buffers))) {
		err = -EFAULT;
		goto out;
	}
	err = sable_core_job_submit(client->npu->core, sable_owner(client), &arg, buffers,
				    &bad_entry);
	if (err) {
		dev_dbg(client->npu->dev, "job refused (%ld), buffer-table entry %u\n", err,
			bad_entry);
		goto out;
	}
	/* The job runs whatever happens now; a lost fence value only means the caller cannot
	 * wait for it, and the job's resources go back at completion or close.
	 */
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		err = -EFAULT;
out:
	kfree(buffers);
	return err;
}

static long sable_ioctl_fence_wait(struct sable_client *client, void __user *uarg)
{
	struct sable_uapi_fence_wait arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	return sable_core_fence_wait(client->npu->core, sable_owner(client), arg.fence,
				     arg.timeout_ns);
}

static long sable_ioctl_job_status(struct sable_client *client, void __user *uarg)
{
	struct sable_uapi_job_status arg;
	int err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	err = sable_core_job_status(client->npu->core, sable_owner(client), &arg);
	if (err)
		return err;
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		return -EFAULT;
	return 0;
}

static long sable_ioctl_fence_release(struct sable_client *client, void __user *uarg)
{
	struct sable_uapi_fence_release arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	return sable_core_fence_release(client->npu->core, sable_owner(client), arg.fence);
}

/* Maps device memory from `address` (a device address) into the whole of vma: uncached unless
 * the NPU's master is cache-coherent with the CPU. The caller checked the range.
 */
static int sable_remap(struct sable_npu *npu, struct vm_area_struct *vma, u64 address)
{
	if (!npu->memory_coherent)
		vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
#ifdef SABLE_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
#else
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
#endif
	return remap_pfn_range(vma, vma->vm_start, PHYS_PFN(npu->memory_phys + address),
			       vma->vm_end - vma->vm_start, vma->vm_page_prot);
}

/*
 * An exported buffer object (BO_EXPORT): the dma-buf holds the object's memory in kmd/core (like
 * a mapping) until its release, whoever frees the handle or closes the device meanwhile.
 */
struct sable_dmabuf {
	struct sable_npu *npu;  /* a reference, until the dma-buf's release */
	struct dma_buf *dmabuf;
	struct list_head node;  /* in npu->dmabufs, under npu->files_lock */
	u64 address; /* device address */
	u64 bytes;   /* page-rounded */
	u32 cookie;  /* kmd/core's hold */
};

/*
 * The device memory is a no-map carve-out: it has no struct page, so the importer gets a one-entry
 * table of DMA addresses only (dma_map_resource of the physical range for its device), which is
 * all the dma-buf contract lets an importer use.
 */
static struct sg_table *sable_dmabuf_map(struct dma_buf_attachment *attach,
					 enum dma_data_direction dir)
{
	struct sable_dmabuf *buf = attach->dmabuf->priv;
	struct sg_table *table;
	dma_addr_t dma;
	int err;

	if (READ_ONCE(buf->npu->unplugged))
		return ERR_PTR(-ENODEV);
	table = kzalloc(sizeof(*table), GFP_KERNEL);
	if (!table)
		return ERR_PTR(-ENOMEM);
	err = sg_alloc_table(table, 1, GFP_KERNEL);
	if (err) {
		kfree(table);
		return ERR_PTR(err);
	}
	dma = dma_map_resource(attach->dev, buf->npu->memory_phys + buf->address, buf->bytes, dir,
			       DMA_ATTR_SKIP_CPU_SYNC);
	if (dma_mapping_error(attach->dev, dma)) {
		sg_free_table(table);
		kfree(table);
		return ERR_PTR(-EIO);
	}
	sg_dma_address(table->sgl) = dma;
	sg_dma_len(table->sgl) = buf->bytes;
	return table;
}

static void sable_dmabuf_unmap(struct dma_buf_attachment *attach, struct sg_table *table,
			       enum dma_data_direction dir)
{
	dma_unmap_resource(attach->dev, sg_dma_address(table->sgl), sg_dma_len(table->sgl), dir,
			   DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(table);
	kfree(table);
}

/* The dma-buf core checked that the range lies within the buffer. */
static int sable_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct sable_dmabuf *buf = dmabuf->priv;
	int err, idx;

	/* Inside the section: an unplug zaps this mapping once it has waited for it. */
	idx = srcu_read_lock(&sable_srcu);
	if (sable_npu_gone(buf->npu))
		err = -ENODEV;
	else
		err = sable_remap(buf->npu, vma,
				  buf->address + ((u64)vma->vm_pgoff << PAGE_SHIFT));
	srcu_read_unlock(&sable_srcu, idx);
	return err;
}

static void sable_dmabuf_release(struct dma_buf *dmabuf)
{
	struct sable_dmabuf *buf = dmabuf->priv;
	struct sable_npu *npu = buf->npu;

	mutex_lock(&npu->files_lock);
	list_del(&buf->node);
	mutex_unlock(&npu->files_lock);
	sable_core_bo_unmap(npu->core, buf->cookie);
	kfree(buf);
	sable_npu_put(npu);
}

static const struct dma_buf_ops sable_dmabuf_ops = {
	.map_dma_buf = sable_dmabuf_map,
	.unmap_dma_buf = sable_dmabuf_unmap,
	.mmap = sable_dmabuf_mmap,
	.release = sable_dmabuf_release,
};

static long sable_ioctl_bo_export(struct sable_client *client, void __user *uarg)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct sable_npu *npu = client->npu;
	struct sable_uapi_bo_export arg;
	struct sable_dmabuf *buf;
	struct dma_buf *dmabuf;
	int fd;
	int err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags & ~SABLE_BO_EXPORT_CLOEXEC || arg.pad != 0)
		return -EINVAL;
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	err = sable_core_bo_hold(npu->core, sable_owner(client), arg.handle, &buf->address,
				 &buf->bytes, &buf->cookie);
	if (err) {
		kfree(buf);
		return err;
	}
	sable_npu_get(npu);
	buf->npu = npu;
	info.ops = &sable_dmabuf_ops;
	info.size = buf->bytes;
	info.flags = O_RDWR;
	info.priv = buf;
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf)) {
		sable_core_bo_unmap(npu->core, buf->cookie);
		kfree(buf);
		sable_npu_put(npu);
		return PTR_ERR(dmabuf);
	}
	mutex_lock(&npu->files_lock);
	buf->dmabuf = dmabuf;
	list_add(&buf->node, &npu->dmabufs);
	mutex_unlock(&npu->files_lock);
	/* From here on, dma_buf_put releases the hold. The descriptor is installed only once the
	 * caller has its number: a failed copy leaves no descriptor behind.
	 */
	fd = get_unused_fd_flags(O_RDWR | (arg.flags & SABLE_BO_EXPORT_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	arg.fd = fd;
	arg.size = buf->bytes;
	if (copy_to_user(uarg, &arg, sizeof(arg))) {
		put_unused_fd(fd);
		dma_buf_put(dmabuf);
		return -EFAULT;
	}
	fd_install(fd, dmabuf->file);
	atomic64_inc(&npu->stats.exports);
	return 0;
}

/* BO_WRITE (2.2): copy_from_user straight into the memremap()ed device memory, under kmd/core's
 * hold of the object.
 */
static long sable_ioctl_bo_write(struct sable_client *client, void __user *uarg)
{
	struct sable_npu *npu = client->npu;
	struct sable_uapi_bo_write arg;
	u64 address;
	u32 cookie;
	long err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	err = sable_core_bo_write_begin(npu->core, sable_owner(client), &arg, &address, &cookie);
	if (err)
		return err;
	if (copy_from_user(npu->memory + address, u64_to_user_ptr(arg.data), arg.size))
		err = -EFAULT;
	sable_core_bo_unmap(npu->core, cookie);
	return err;
}

/* Whether cmd is one of the UAPI's requests (their one list: SABLE_UAPI_REQUESTS). */
static bool sable_uapi_request(unsigned int cmd)
{
	switch (cmd) {
#define SABLE_REQUEST_CASE(request) case request:
	SABLE_UAPI_REQUESTS(SABLE_REQUEST_CASE)
#undef SABLE_REQUEST_CASE
		return true;
	default:
		return false;
	}
}

static long sable_ioctl_request(struct sable_client *client, unsigned int cmd,
				void __user *uarg)
{
	switch (cmd) {
	case SABLE_IOCTL_HANDSHAKE:
		return sable_ioctl_handshake(client, uarg);
	case SABLE_IOCTL_GET_INFO:
		return sable_ioctl_get_info(client, uarg);
	case SABLE_IOCTL_BO_CREATE:
		return sable_ioctl_bo_create(client, uarg);
	case SABLE_IOCTL_BO_FREE:
		return sable_ioctl_bo_free(client, uarg);
	case SABLE_IOCTL_PROGRAM_REGISTER:
		return sable_ioctl_program_register(client, uarg);
	case SABLE_IOCTL_PROGRAM_RELEASE:
		return sable_ioctl_program_release(client, uarg);
	case SABLE_IOCTL_JOB_SUBMIT:
		return sable_ioctl_job_submit(client, uarg);
	case SABLE_IOCTL_FENCE_WAIT:
		return sable_ioctl_fence_wait(client, uarg);
	case SABLE_IOCTL_JOB_STATUS:
		return sable_ioctl_job_status(client, uarg);
	case SABLE_IOCTL_FENCE_RELEASE:
		return sable_ioctl_fence_release(client, uarg);
	case SABLE_IOCTL_BO_EXPORT:
		return sable_ioctl_bo_export(client, uarg);
	default: /* SABLE_IOCTL_BO_WRITE: sable_uapi_request listed every request */
		return sable_ioctl_bo_write(client, uarg);
	}
}

static long sable_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sable_client *client = file->private_data;
	long err;
	int idx;

	atomic64_inc(&client->npu->stats.ioctls);
	if (!sable_uapi_request(cmd))
		return -ENOTTY;
	if (cmd != SABLE_IOCTL_HANDSHAKE && !READ_ONCE(client->handshaken))
		return -EPROTO; /* the UAPI: the handshake comes first */
	/* A request sleeps here at most until an unplug fails its job or registration. */
	idx = srcu_read_lock(&sable_srcu);
	if (sable_npu_gone(client->npu))
		err = -ENODEV;
	else
		err = sable_ioctl_request(client, cmd, (void __user *)arg);
	srcu_read_unlock(&sable_srcu, idx);
	return err;
}

/* A mapping holds its buffer object's memory (kmd/core) until it is unmapped; a forked copy of
 * the mapping (vm_ops->open) holds it too. The cookie rides in vm_private_data.
 */
struct sable_vma {
	struct sable_npu *npu;  /* a reference, until the last copy of the mapping closes */
	u32 cookie;
	refcount_t refs;
};

static void sable_vm_open(struct vm_area_struct *vma)
{
	struct sable_vma *map = vma->vm_private_data;

	refcount_inc(&map->refs);
}

static void sable_vm_close(struct vm_area_struct *vma)
{
	struct sable_vma *map = vma->vm_private_data;

	if (refcount_dec_and_test(&map->refs)) {
		sable_core_bo_unmap(map->npu->core, map->cookie);
		sable_npu_put(map->npu);
		kfree(map);
	}
}

static const struct vm_operations_struct sable_vm_ops = {
	.open = sable_vm_open,
	.close = sable_vm_close,
};

/* mmap(offset = the object's mmap_offset, i.e. its device address): the object's pages of the
 * reserved region, uncached unless the NPU's master is cache-coherent with the CPU.
 */
static int sable_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct sable_client *client = file->private_data;
	struct sable_npu *npu = client->npu;
	const u64 address = (u64)vma->vm_pgoff << PAGE_SHIFT;
	const u64 bytes = vma->vm_end - vma->vm_start;
	struct sable_vma *map;
	int err, idx;

	if (!READ_ONCE(client->handshaken))
		return -EPROTO;
	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map)
		return -ENOMEM;
	/* Inside the section: an unplug zaps this mapping once it has waited for it. */
	idx = srcu_read_lock(&sable_srcu);
	err = sable_npu_gone(npu) ? -ENODEV :
	      sable_core_bo_map(npu->core, sable_owner(client), address, bytes, &map->cookie);
	if (err)
		goto out;
	refcount_set(&map->refs, 1);
	err = sable_remap(npu, vma, address);
	if (err) {
		sable_core_bo_unmap(npu->core, map->cookie);
		goto out;
	}
	sable_npu_get(npu);
	map->npu = npu;
	vma->vm_private_data = map;
	vma->vm_ops = &sable_vm_ops;
	atomic64_inc(&npu->stats.mmaps);
	map = NULL;
out:
	srcu_read_unlock(&sable_srcu, idx);
	kfree(map);
	return err;
}

static const struct file_operations sable_fops = {
	.owner = THIS_MODULE,
	.open = sable_open,
	.release = sable_release,
	.unlocked_ioctl = sable_ioctl,
	/* Every UAPI struct has fixed-size fields and explicit padding. */
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = sable_mmap,
	.llseek = noop_llseek,
};

/*
 * The host interrupt is a pulse from the host-interface block (the firmware writes HOST_IRQ
 * after publishing completions): nothing to acknowledge, so the hard handler only wakes the
 * thread, which drains the completion ring under the core's mutex.
 */
static irqreturn_t sable_irq(int irq, void *data)
{
	struct sable_npu *npu = data;

	atomic64_inc(&npu->stats.irqs);
	return IRQ_WAKE_THREAD;
}

static irqreturn_t sable_irq_thread(int irq, void *data)
{
	struct sable_npu *npu = data;

	if (sable_core_process_completions(npu->core) < 0)
		dev_err_ratelimited(npu->dev, "the completion ring is corrupted\n");
	return IRQ_HANDLED;
}

/* Resets the device (kmd/core: pending jobs fail, programs go stale, the firmware restarts on a
 * fresh boot block); called by the health work only, so resets never overlap.
 */
static void sable_reset(struct sable_npu *npu, const char *why, u32 state)
{
	struct sable_core_counters counters;
	int err;

	dev_err(npu->dev, "resetting the device: %s (firmware state %u)\n", why, state);
	err = sable_core_reset(npu->core, (s64)SABLE_BOOT_TIMEOUT_MS * NSEC_PER_MSEC);
	sable_core_get_counters(npu->core, &counters);
	npu->ring_faults_seen = counters.ring_faults;
	npu->gave_up = err != 0;
	WRITE_ONCE(npu->reset_result, err); /* kmd/core logged the outcome */
}

/*
 * The firmware stopping (not READY), a corrupted ring or no progress with work pending resets
 * the device (auto_reset), or loses it: pending jobs end with -EIO and clients can clean up. A
 * reset that fails leaves the device lost until one is requested through debugfs.
 */
static void sable_health(struct work_struct *work)
{
	struct sable_npu *npu = container_of(to_delayed_work(work), struct sable_npu, health);
	const bool requested = atomic_xchg(&npu->reset_requested, 0) != 0;
	struct sable_core_counters counters;
	const char *why = NULL;
	u32 state, version;

	u64 timer;

	sable_core_firmware_status(npu->core, &state, &version);
	sable_core_get_counters(npu->core, &counters);
	/* The host-interface block's timer runs whatever the firmware does: standing still while
	 * work is pending, the device is gone (a card that fell off the bus, a sable-simd that
	 * exited under a guest). Only then: a simulated device's timer counts its simulated
	 * cycles, which stand still while it idles (docs/device.md, "Time").
	 */
	timer = sable_npu_timer_us(npu);
	if (requested)
		why = "requested through debugfs";
	else if (npu->gave_up)
		why = NULL;
	else if (timer == npu->timer_seen && sable_core_busy(npu->core))
		why = "the device's timer stands still with work pending (the device is gone)";
	else if (state != SABLE_FW_STATE_READY)
		why = "the firmware is not READY";
	else if (counters.ring_faults != npu->ring_faults_seen)
		why = "a ring is corrupted";
	else if (hang_timeout_ms != 0 &&
		 sable_core_hung(npu->core, (u64)hang_timeout_ms * NSEC_PER_MSEC))
		why = "no progress with work pending for hang_timeout_ms";

	if (why && (requested || READ_ONCE(auto_reset))) {
		sable_reset(npu, why, state);
	} else if (why) {
		dev_err(npu->dev, "device lost: %s (firmware state %u); auto_reset is off\n", why,
			state);
		atomic64_inc(&npu->stats.device_lost);
		sable_core_device_lost(npu->core);
		npu->gave_up = true;
	} else if (!npu->gave_up) {
		/* A lost interrupt must not hang a job forever: drain the ring now and then. */
		sable_core_process_completions(npu->core);
	}
	npu->timer_seen = timer;
	schedule_delayed_work(&npu->health, msecs_to_jiffies(SABLE_HEALTH_PERIOD_MS));
}

/* debugfs "reset": writing anything resets the device now (bring-up); the write returns when
 * the reset is done, with its error.
 */
static ssize_t sable_reset_write(struct file *file, const char __user *buf, size_t count,
				 loff_t *ppos)
{
	struct sable_npu *npu = file->private_data;
	int err;

	atomic_set(&npu->reset_requested, 1);
	mod_delayed_work(system_wq, &npu->health, 0);
	flush_delayed_work(&npu->health);
	err = READ_ONCE(npu->reset_result);
	return err ? err : (ssize_t)count;
}

static const struct file_operations sable_reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = sable_reset_write,
	.llseek = noop_llseek,
};

static int sable_counters_show(struct seq_file *s, void *unused)
{
	struct sable_npu *npu = s->private;
	struct sable_core_counters core;
	u64 total, free_bytes;

	sable_core_get_counters(npu->core, &core);
	sable_core_memory_info(npu->core, &total, &free_bytes);
	seq_printf(s, "irqs %lld\n", (long long)atomic64_read(&npu->stats.irqs));
	seq_printf(s, "opens %lld\n", (long long)atomic64_read(&npu->stats.opens));
	seq_printf(s, "handshakes %lld\n", (long long)atomic64_read(&npu->stats.handshakes));
	seq_printf(s, "handshakes_refused %lld\n",
		   (long long)atomic64_read(&npu->stats.handshakes_refused));
	seq_printf(s, "ioctls %lld\n", (long long)atomic64_read(&npu->stats.ioctls));
	seq_printf(s, "mmaps %lld\n", (long long)atomic64_read(&npu->stats.mmaps));
	seq_printf(s, "exports %lld\n", (long long)atomic64_read(&npu->stats.exports));
	seq_printf(s, "device_lost %lld\n", (long long)atomic64_read(&npu->stats.device_lost));
	seq_printf(s, "memory_bytes %llu\nmemory_free %llu\n", total, free_bytes);
	seq_printf(s, "jobs_submitted %llu\n", core.jobs_submitted);
	seq_printf(s, "jobs_completed %llu\n", core.jobs_completed);
	seq_printf(s, "jobs_failed %llu\n", core.jobs_failed);
	seq_printf(s, "submit_ring_full %llu\n", core.submit_ring_full);
	seq_printf(s, "fence_table_full %llu\n", core.fence_table_full);
	seq_printf(s, "wait_timeouts %llu\n", core.wait_timeouts);
	seq_printf(s, "stray_completions %llu\n", core.stray_completions);
	seq_printf(s, "ring_faults %llu\n", core.ring_faults);
	seq_printf(s, "jobs_lost %llu\n", core.jobs_lost);
	seq_printf(s, "resets %llu\n", core.resets);
	seq_printf(s, "resets_failed %llu\n", core.resets_failed);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sable_counters);

static int sable_ids_show(struct seq_file *s, void *unused)
{
	struct sable_npu *npu = s->private;
	const struct sable_core_device_ids *ids = &npu->ids;
	u32 state, version;

	sable_core_firmware_status(npu->core, &state, &version);
	seq_printf(s, "id 0x%08x\nversion 0x%08x\nconfig_id 0x%08x\n", ids->id, ids->version,
		   ids->config_id);
	seq_printf(s, "hwcfg 0x%08x 0x%08x 0x%08x\n", ids->hwcfg[0], ids->hwcfg[1],
		   ids->hwcfg[2]);
	seq_printf(s, "firmware_state %u\nfirmware_version 0x%08x\n", state, version);
	seq_printf(s, "memory %pa + 0x%llx%s\n", &npu->memory_phys, npu->memory_size,
		   npu->memory_coherent ? " coherent" : "");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sable_ids);

static void sable_ida_free(void *data)
{
	ida_free(&sable_ida, (int)(long)data);
}

/*
 * The device goes away (an unbind: rmmod, a PCI remove, a card that disappeared), perhaps under
 * open files, mappings and dma-bufs, which keep the state (not the device) until their last
 * put. After this, their operations fail with -ENODEV, pending jobs and waits have ended with
 * -EIO, the OS layer no longer touches the windows or the memory, and user mappings of the
 * memory are gone (an access is SIGBUS); then devm unmaps and frees the device's resources.
 */
static void sable_unplug(void *data)
{
	struct sable_npu *npu = data;
	struct sable_client *client;
	struct sable_dmabuf *buf;

	misc_deregister(&npu->misc); /* no new client */
	cancel_delayed_work_sync(&npu->health); /* no reset from here on */
	/* The firmware stops touching memory the kernel may reuse (a card still there). */
	sable_npu_hostif_write(npu, SABLE_HOSTIF_REG_HALT, 1);
	/* No completion is read from here on (it would read an unplugged device's zeros). */
	disable_irq(npu->irq);
	WRITE_ONCE(npu->unplugged, true);
	sable_core_device_lost(npu->core); /* waits end, requests fail */
	synchronize_srcu(&sable_srcu);
	mutex_lock(&npu->files_lock);
	list_for_each_entry(client, &npu->clients, node)
		unmap_mapping_range(client->file->f_mapping, 0, 0, 1);
	list_for_each_entry(buf, &npu->dmabufs, node)
		unmap_mapping_range(buf->dmabuf->file->f_mapping, 0, 0, 1);
	mutex_unlock(&npu->files_lock);
	if (!list_empty(&npu->clients) || !list_empty(&npu->dmabufs))
		dev_warn(npu->dev, "removed with files open: they fail with ENODEV until closed\n");
}

static void sable_debugfs_remove(void *data)
{
	debugfs_remove_recursive(data);
}

static void sable_health_stop(void *data)
{
	struct sable_npu *npu = data;

	cancel_delayed_work_sync(&npu->health);
}

/* Asks the firmware to stop (HALT) when a probe fails after the boot, so it no longer touches
 * memory the kernel is about to reuse (a bound device's unbind does it in sable_unplug; this
 * one then writes nothing).
 */
static void sable_firmware_halt(void *data)
{
	struct sable_npu *npu = data;

	sable_npu_hostif_write(npu, SABLE_HOSTIF_REG_HALT, 1);
}

static int sable_map(struct platform_device *pdev, const char *name, void __iomem **base,
		     resource_size_t *size)
{
	struct resource *res;

	res = platform_get_resource_byname(pdev, IORESOURCE_MEM, name);
	if (!res)
		return dev_err_probe(&pdev->dev, -EINVAL, "no \"%s\" in reg-names\n", name);
	if (resource_size(res) < sizeof(u32))
		return dev_err_probe(&pdev->dev, -EINVAL, "\"%s\" window is too small\n", name);
	*base = devm_ioremap_resource(&pdev->dev, res);
	if (IS_ERR(*base))
		return PTR_ERR(*base);
	*size = resource_size(res);
	return 0;
}

/* The device memory: the reserved-memory node of "memory-region" (a fixed physical range the
 * board's interconnect translates to device address 0 for the NPU and the control core).
 */
static int sable_map_memory(struct platform_device *pdev, struct sable_npu *npu)
{
	struct device *dev = &pdev->dev;
	struct device_node *node;
	struct resource res;
	int err;

	node = of_parse_phandle(dev->of_node, "memory-region", 0);
	if (!node)
		return dev_err_probe(dev, -EINVAL, "no \"memory-region\": the device memory\n");
	err = of_address_to_resource(node, 0, &res);
	of_node_put(node);
	if (err)
		return dev_err_probe(dev, err, "\"memory-region\" has no reg\n");
	npu->memory_phys = res.start;
	npu->memory_size = resource_size(&res);
	if (npu->memory_size > SABLE_FW_DEVICE_MEMORY_LIMIT)
		npu->memory_size = SABLE_FW_DEVICE_MEMORY_LIMIT;
	npu->memory_coherent = of_dma_is_coherent(dev->of_node);
	npu->memory = devm_memremap(dev, npu->memory_phys, npu->memory_size,
				    npu->memory_coherent ? MEMREMAP_WB : MEMREMAP_WC);
	if (IS_ERR(npu->memory))
		return dev_err_probe(dev, PTR_ERR(npu->memory), "cannot map the device memory\n");
	return 0;
}

/* Lays the firmware's structures out, tells the host-interface block where the boot block is
 * and waits for the firmware (started by the board: remoteproc, a reset release, or already
 * waiting for a boot block) to report READY.
 */
static int sable_boot(struct sable_npu *npu)
{
	unsigned long deadline;
	u32 state = SABLE_FW_STATE_OFF;
	u32 version = 0;
	int err;

	err = sable_core_boot(npu->core, npu->memory_size, watchdog_ms * 1000u);
	if (err)
		return dev_err_probe(npu->dev, err,
				     "device memory of %llu bytes is unusable (4 MiB at least)\n",
				     npu->memory_size);
	err = sable_npu_firmware_start(npu);
	if (err)
		return dev_err_probe(npu->dev, err, "cannot start the control core\n");
	deadline = jiffies + msecs_to_jiffies(SABLE_BOOT_TIMEOUT_MS);
	while (time_before(jiffies, deadline)) {
		sable_core_firmware_status(npu->core, &state, &version);
		if (state != SABLE_FW_STATE_OFF)
			break;
		usleep_range(10000, 20000);
	}
	if (state != SABLE_FW_STATE_READY) {
		/* The node still appears, so that `sable info` can say what is wrong. */
		dev_err(npu->dev, "the firmware did not report READY within %d ms (state %u)\n",
			SABLE_BOOT_TIMEOUT_MS, state);
		atomic64_inc(&npu->stats.device_lost);
		sable_core_device_lost(npu->core);
		npu->gave_up = true; /* a debugfs reset tries again */
		return 0;
	}
	npu->ids.firmware_version = version;
	return 0;
}

int sable_npu_probe(struct sable_npu *npu)
{
	struct device *dev = npu->dev;
	u32 isa;
	int err;

	/* Freed with the state, on its last put. */
	npu->core = kvzalloc(sizeof(*npu->core), GFP_KERNEL);
	if (!npu->core)
		return -ENOMEM;
	sable_npu_os_init(npu);
	sable_core_init(npu->core, &npu->os);
	err = sable_core_identify(&npu->os, &npu->ids);
	if (err)
		return dev_err_probe(dev, err, "no Sable NPU here: ID register reads 0x%08x\n",
				     readl(npu->csr));

	err = sable_boot(npu);
	if (err)
		return err;
	err = devm_add_action_or_reset(dev, sable_firmware_halt, npu);
	if (err)
		return err;
	err = devm_request_threaded_irq(dev, npu->irq, sable_irq, sable_irq_thread, IRQF_ONESHOT,
					dev_name(dev), npu);
	if (err)
		return dev_err_probe(dev, err, "cannot request IRQ %d\n", npu->irq);
	npu->timer_seen = sable_npu_timer_us(npu);
	INIT_DELAYED_WORK(&npu->health, sable_health);
	err = devm_add_action_or_reset(dev, sable_health_stop, npu);
	if (err)
		return err;
	schedule_delayed_work(&npu->health, msecs_to_jiffies(SABLE_HEALTH_PERIOD_MS));

	npu->id = ida_alloc(&sable_ida, GFP_KERNEL);
	if (npu->id < 0)
		return npu->id;
	err = devm_add_action_or_reset(dev, sable_ida_free, (void *)(long)npu->id);
	if (err)
		return err;
	snprintf(npu->name, sizeof(npu->name), "sable-npu%d", npu->id);

	npu->misc.minor = MISC_DYNAMIC_MINOR;
	npu->misc.name = npu->name;
	npu->misc.fops = &sable_fops;
	npu->misc.parent = dev;
	err = misc_register(&npu->misc);
	if (err)
		return dev_err_probe(dev, err, "cannot register /dev/%s\n", npu->name);
	err = devm_add_action_or_reset(dev, sable_unplug, npu);
	if (err)
		return err;

	npu->debugfs = debugfs_create_dir(npu->name, NULL);
	debugfs_create_file("counters", 0444, npu->debugfs, npu, &sable_counters_fops);
	debugfs_create_file("ids", 0444, npu->debugfs, npu, &sable_ids_fops);
	debugfs_create_file("reset", 0200, npu->debugfs, npu, &sable_reset_fops);
	err = devm_add_action_or_reset(dev, sable_debugfs_remove, npu->debugfs);
	if (err)
		return err;

	isa = sable_core_isa_version(npu->ids.version);
	dev_info(dev, "Sable NPU (%s), ISA %u.%u, configuration 0x%08x, firmware %u.%u, %llu MiB: /dev/%s\n",
		 npu->backend, isa >> 16, isa & 0xffff, npu->ids.config_id,
		 npu->ids.firmware_version >> 16, npu->ids.firmware_version & 0xffff,
		 npu->memory_size >> 20, npu->name);
	return 0;
}

static int sable_platform_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct sable_npu *npu;
	int err;

	npu = sable_npu_alloc(dev);
	if (!npu)
		return -ENOMEM;
	npu->backend = "fpga";
	err = sable_map(pdev, "npu", &npu->csr, &npu->csr_size);
	if (err)
		return err;
	err = sable_map(pdev, "hostif", &npu->hostif, &npu->hostif_size);
	if (err)
		return err;
	if (npu->hostif_size < SABLE_HOSTIF_REG_HALT + sizeof(u32))
		return dev_err_probe(dev, -EINVAL, "\"hostif\" window is too small\n");
	err = sable_map_memory(pdev, npu);
	if (err)
		return err;

	/* The control core's reset line, if the board wired one ("resets"): lets a reset stop a
	 * firmware too hung to answer HALT.
	 */
	npu->reset = devm_reset_control_get_optional_exclusive(dev, NULL);
	if (IS_ERR(npu->reset))
		return dev_err_probe(dev, PTR_ERR(npu->reset), "cannot get the reset line\n");
	npu->irq = platform_get_irq(pdev, 0);
	if (npu->irq < 0)
		return npu->irq;
	platform_set_drvdata(pdev, npu);
	return sable_npu_probe(npu);
}

static const struct of_device_id sable_of_match[] = {
	{ .compatible = "sable,npu" },
	{ }
};
MODULE_DEVICE_TABLE(of, sable_of_match);

static struct platform_driver sable_driver = {
	.probe = sable_platform_probe,
	.driver = {
		.name = "sable-npu",
		.of_match_table = sable_of_match,
	},
};

static int __init sable_init(void)
{
	int err;

	err = platform_driver_register(&sable_driver);
	if (err)
		return err;
	err = sable_pci_register();
	if (err)
		platform_driver_unregister(&sable_driver);
	return err;
}
module_init(sable_init);

static void __exit sable_exit(void)
{
	sable_pci_unregister();
	platform_driver_unregister(&sable_driver);
}
module_exit(sable_exit);

MODULE_DESCRIPTION("Sable NPU driver: the UAPI of kmd/include/uapi over kmd/core");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
